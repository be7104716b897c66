// Dedicated linear for prefill (M > 8 rows): one packed GEMM, out = x weight^T + bias, with the bias added in the
// epilogue. bf16/f16 weights under f32 x are converted while packing; fp8 (scaled_linear) is not covered.
#include "backends/cpu/cpu_ops.h"

namespace fourfold::cpu {
namespace {

bool computes(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

}  // namespace

bool linear_prefill_covers(const LinearArgs& a) {
  return a.weight_scale == nullptr && a.x.size(0) > kLinearDecodeMaxRows && computes(a.x.dtype()) &&
         computes(a.weight.dtype());
}

void linear_prefill(const LinearArgs& a, const GemmPieces& pieces) {
  // weight is [N, K]: B = weight^T, read through swapped strides.
  gemm({{a.x.size(0), a.weight.size(0), a.x.size(1), operand(a.x), operand(a.weight, true), output(a.out, a.bias)}},
       pieces);
}

}  // namespace fourfold::cpu
