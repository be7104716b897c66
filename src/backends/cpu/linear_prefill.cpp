// Dedicated linear for prefill (M > 8 rows): one packed GEMM, out = x weight^T + bias, with the bias added in the
// epilogue. bf16/f16 weights under f32 x are converted while packing; so are fp8 weights (scaled_linear), each
// element times its dequantization scale, never through a dequantized copy of the weight, at the levels without
// the GEMM's direct path; with it, the driver gives fp8 weights to the direct path (gemm.cpp, gemm_direct.cpp).
// FP4 weights are dequantized panel by panel as the GEMM packs them (fp4_weights.cpp).
#include "backends/cpu/cpu_ops.h"

namespace fourfold::cpu {
namespace {

bool computes(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

}  // namespace

bool linear_prefill_covers(const LinearArgs& a) {
  if (a.x.size(0) <= kLinearDecodeMaxRows || !computes(a.x.dtype())) return false;
  if (is_fp4(a.weight.dtype())) return true;
  if (a.weight_scale != nullptr) return is_fp8(a.weight.dtype()) && a.weight_scale->dtype() == DType::f32;
  return computes(a.weight.dtype());
}

void linear_prefill(const LinearArgs& a, const GemmPieces& pieces) {
  if (is_fp4(a.weight.dtype())) {
    // B = weight^T as f32 panels, each dequantized as it is packed (fp4_weights.cpp); only the type of the
    // operand counts with a packer.
    const Fp4PanelSource source{&a.weight, a.weight_scale, a.global_scale, pieces.nr()};
    const PanelPacker packer = fp4_panel_packer(source);
    const GemmOperand w{nullptr, RowType::f32, 0, 0};
    gemm({{a.x.size(0), a.weight.size(0), a.x.size(1), operand(a.x), w, output(a.out, a.bias), &packer}}, pieces);
    return;
  }
  // weight is [N, K]: B = weight^T, read through swapped strides.
  const GemmOperand w = a.weight_scale == nullptr ? operand(a.weight, true)
                                                  : operand(a.weight, true, *a.weight_scale, a.weight_recipe);
  gemm({{a.x.size(0), a.weight.size(0), a.x.size(1), operand(a.x), w, output(a.out, a.bias)}}, pieces);
}

}  // namespace fourfold::cpu
