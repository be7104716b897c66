// Reference layer_norm: each row of [R, D] in float64, biased variance.
#include <cmath>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void layer_norm(const LayerNormArgs& a) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  if (d == 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0.0;
    for (int64_t j = 0; j < d; ++j) mean += at(a.x, r, j);
    mean /= static_cast<double>(d);
    double var = 0.0;
    for (int64_t j = 0; j < d; ++j) {
      const double c = at(a.x, r, j) - mean;
      var += c * c;
    }
    var /= static_cast<double>(d);
    const double inv = 1.0 / std::sqrt(var + a.eps);
    for (int64_t j = 0; j < d; ++j) {
      double y = (at(a.x, r, j) - mean) * inv;
      if (a.weight != nullptr) y *= at(*a.weight, j);
      if (a.bias != nullptr) y += at(*a.bias, j);
      const int64_t idx[2] = {r, j};
      put(a.out, idx, y);
    }
  }
}

}  // namespace fourfold::ref
