// Reference group_norm: statistics over each group's (C / groups) x S elements in float64, biased variance.
#include <cmath>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void group_norm(const GroupNormArgs& a) {
  const int64_t n = a.x.size(0), c = a.x.size(1), s = a.x.size(2);
  const int64_t per_group = c / a.groups;
  const double count = static_cast<double>(per_group * s);
  if (per_group * s == 0) return;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < a.groups; ++g) {
      const int64_t c0 = g * per_group, c1 = c0 + per_group;
      double mean = 0.0;
      for (int64_t ch = c0; ch < c1; ++ch)
        for (int64_t p = 0; p < s; ++p) mean += at(a.x, b, ch, p);
      mean /= count;
      double var = 0.0;
      for (int64_t ch = c0; ch < c1; ++ch)
        for (int64_t p = 0; p < s; ++p) {
          const double d = at(a.x, b, ch, p) - mean;
          var += d * d;
        }
      var /= count;
      const double inv = 1.0 / std::sqrt(var + a.eps);
      for (int64_t ch = c0; ch < c1; ++ch) {
        const double w = a.weight != nullptr ? at(*a.weight, ch) : 1.0;
        const double bias = a.bias != nullptr ? at(*a.bias, ch) : 0.0;
        for (int64_t p = 0; p < s; ++p) {
          const int64_t idx[3] = {b, ch, p};
          put(a.out, idx, (at(a.x, b, ch, p) - mean) * inv * w + bias);
        }
      }
    }
}

}  // namespace fourfold::ref
