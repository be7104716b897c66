// Reference rms_norm_gated in float64, rounding where the op's definition rounds (transformers' roundings): the
// normed x to x's dtype, its product with the weight to the product's dtype, the result on store. With float64
// inputs (the oracle) none of those roundings change anything.
#include <cmath>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {
namespace {

double round_to(DType dtype, double v) {
  unsigned char bytes[8];
  store_from_double(dtype, bytes, v);
  return load_as_double(dtype, bytes);
}

}  // namespace

void rms_norm_gated(const RmsNormGatedArgs& a) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  const DType xt = a.x.dtype();
  // weight * normed as PyTorch types it: the wider of the two.
  const DType product = a.weight != nullptr && a.weight->dtype() == DType::f32 && xt != DType::f64 ? DType::f32 : xt;
  for (int64_t r = 0; r < rows && d > 0; ++r) {
    double sum_sq = 0.0;
    for (int64_t j = 0; j < d; ++j) sum_sq += at(a.x, r, j) * at(a.x, r, j);
    const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(d) + a.eps);
    for (int64_t j = 0; j < d; ++j) {
      double y = round_to(xt, at(a.x, r, j) * inv);
      if (a.weight != nullptr) y = round_to(product, at(*a.weight, j) * y);
      const double g = at(a.gate, r, j);
      const int64_t idx[2] = {r, j};
      put(a.out, idx, y * (g / (1.0 + std::exp(-g))));
    }
  }
}

}  // namespace fourfold::ref
