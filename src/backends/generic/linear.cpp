// Generic linear (and scaled_linear): x and weight converted to f32 temporaries, a blocked GEMM into an f32 temporary, a separate
// bias pass, then one conversion to the output dtype.
#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"
#include "core/fp4_blocks.h"

namespace fourfold::generic {
namespace {

bool linear_covers(const LinearArgs& a) { return computes(a.x.dtype()); }

void linear(const LinearArgs& a) {
  const int64_t m = a.x.size(0), k = a.x.size(1), n = a.weight.size(0);
  if (m == 0 || n == 0) return;
  const Tensor x = to_f32(a.x);
  // An fp8 weight is dequantized into an f32 copy in memory first, as a graph lowering does.
  const Tensor w = is_fp4(a.weight.dtype()) ? dequantize_fp4_f32(a.weight, *a.weight_scale, fp4_global_value(a.global_scale))
                   : a.weight_scale == nullptr ? to_f32(a.weight)
                                               : dequantize_f32(a.weight, *a.weight_scale, a.weight_recipe);
  Tensor product = empty_f32({m, n});
  gemm_nt(x.data_as<float>(), w.data_as<float>(), product.data_as<float>(), m, n, k);
  finish_product(product, a.bias, a.out);
}

}  // namespace

void finish_product(const Tensor& product, const Tensor* bias_in, Tensor& out) {
  if (bias_in == nullptr) {
    from_f32(product, out);
    return;
  }
  const int64_t m = product.size(0), n = product.size(1);
  const Tensor bias = to_f32(*bias_in);
  Tensor y = empty_f32({m, n});
  binary(Binary::add, product.data_as<float>(), bias.data_as<float>(), Broadcast::per_col, y.data_as<float>(), m, n);
  from_f32(y, out);
}

FOURFOLD_GENERIC_KERNELS(linear) {
  t.linear = entry(&linear, &linear_covers);
}

}  // namespace fourfold::generic
