// Reference linear and scaled_linear: out[m, n] = sum_k x[m, k] * weight[n, k] * scale + bias[n], in float64,
// rounded once.
#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"
#include "core/fp4_blocks.h"

namespace fourfold::ref {
namespace {

// weight[n, k] with scaled_linear's dequantization scale applied (1 for a plain linear).
double weight_at(const LinearArgs& a, int64_t n, int64_t k) {
  if (is_fp4(a.weight.dtype())) return fp4_weight_at(a.weight, *a.weight_scale, fp4_global_value(a.global_scale), 0, n, k);
  const double w = at(a.weight, n, k);
  if (a.weight_scale == nullptr) return w;
  switch (a.weight_recipe) {
    case ScaleRecipe::tensorwise: return w * at(*a.weight_scale, 0, 0);
    case ScaleRecipe::rowwise: return w * at(*a.weight_scale, n, 0);
    default: return w * at(*a.weight_scale, n / 128, k / 128);
  }
}

}  // namespace

void linear(const LinearArgs& args) {
  const int64_t m_size = args.x.size(0), k_size = args.x.size(1), n_size = args.weight.size(0);
  for (int64_t m = 0; m < m_size; ++m)
    for (int64_t n = 0; n < n_size; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < k_size; ++k) acc += at(args.x, m, k) * weight_at(args, n, k);
      if (args.bias != nullptr) acc += at(*args.bias, n);
      put(args.out, Index{m, n}, acc);
    }
}

}  // namespace fourfold::ref
