// Dedicated scaled_mm beyond the decode GEMV's reach (more than kGemvMaxM rows, or b stored N-contiguous): one
// packed GEMM whose packing converts both fp8 operands in registers and multiplies each element by its scale
// (kernels/gemm.cpp), so neither operand is ever dequantized into a copy; bias and rounding in the epilogue.
#include "backends/cpu/cpu_ops.h"

namespace fourfold::cpu {
namespace {

bool float_out(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

}  // namespace

bool scaled_mm_prefill_covers(const ScaledMmArgs& s) {
  return float_out(s.out.dtype()) && s.scale_a.dtype() == DType::f32 && s.scale_b.dtype() == DType::f32 &&
         (s.bias == nullptr || float_out(s.bias->dtype()));
}

void scaled_mm_prefill(const ScaledMmArgs& s, const GemmPieces& pieces) {
  // b [K, N] with scale_b in b's orientation: transposed, both are a weight [N, K] and its scale in op_args.h's
  // weight layout (b's rowwise [1, N] becomes [N, 1], its 128x1 blocks [kb, N] become 1x128 blocks [N, kb]),
  // which the GEMM reads back as the operand B = weight^T.
  const Tensor w = s.b.transpose(0, 1), w_scale = s.scale_b.transpose(0, 1);
  gemm({{s.a.size(0), s.b.size(1), s.a.size(1), operand(s.a, false, s.scale_a, s.recipe_a),
         operand(w, true, w_scale, s.recipe_b), output(s.out, s.bias)}},
       pieces);
}

}  // namespace fourfold::cpu
