// What the dedicated CPU tier's op files share: the decode GEMV's driver and activations, the routes linear
// and scaled_mm choose between (decode GEMV or packed prefill GEMM, each in its own file), and the pieces of
// grouped_mm and moe_experts. Planning, Tensor access and threading are written once (baseline ISA), calling
// the per-ISA pieces (kernels/kernels.h) they are handed. An op's own kernel is file-local and registers
// itself (cpu_registration.h).
#pragma once

#include "backends/cpu/gemm.h"
#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/kernels/silu_mul.h"
#include "backends/op_args.h"

#include <utility>
#include <vector>

namespace fourfold::cpu {

// ---- linear (linear.cpp picks the route): the packed GEMM for prefill, more than kLinearDecodeMaxRows rows
// (fewer rows are the decode GEMV's, linear_decode.cpp); fp8 weights (scaled_linear) with an f32 scale too.
inline constexpr int64_t kLinearDecodeMaxRows = kGemvMaxM;   // the GEMV (kernels.h) takes the rest
bool linear_prefill_covers(const LinearArgs& args);
void linear_prefill(const LinearArgs& args, const GemmPieces& pieces);

// grouped_mm and moe_experts: f32 or bf16 with K-contiguous rows of A and B^T (a checkpoint's [out, in]
// weights, passed to grouped_mm as the transposed view; moe_experts' experts may also be fp8 e4m3fn with
// 128x128 block scales); other layouts fall back to the generic tier. Groups (experts) of a few rows
// take the decode loops: they stream each weight row once (the decode GEMV's rows, fp8 experts included; dot
// tiles for grouped_mm with a 3-D a, and for experts whose gate and up differ in being fp8); larger ones take
// the packed GEMM's tiles.
using DotTileFn = void (*)(const DotTile&);
using GemvRowsFn = void (*)(const GemvPlan&, int64_t, int64_t);
// A level's GEMV rows and whether they take fp8 weights on bf16 pairs (then plans of fp8 weights carry the
// activations as pair_activations, see kernels.h's GemvPlan::xp).
struct GemvPieces {
  GemvRowsFn rows;
  bool (*pairs_fast)();
};
#define FOURFOLD_GEMV_PIECES(isa) \
  cpu::GemvPieces { &cpu::isa::gemv_rows, &cpu::isa::gemv_pairs_fast }
struct GroupedPieces {
  DotTileFn dot;
  GemvPieces gemv;
  GemmPieces gemm;
  SiluMulFn silu_mul;   // moe_experts' silu(gate) * up
};
#define FOURFOLD_GROUPED_PIECES(isa)                                                                      \
  cpu::GroupedPieces {                                                                                    \
    &cpu::isa::dot_tile, FOURFOLD_GEMV_PIECES(isa), FOURFOLD_GEMM_PIECES(isa), &cpu::isa::silu_mul        \
  }
// Decode GEMV (kernels/gemv.cpp), shared by linear / scaled_linear with M <= 8, scaled_mm with small M and
// grouped_mm's small groups.
// The plan's N rows split over the threads in one parallel region.
void run_gemv(const GemvPlan& plan, const GemvPieces& gemv);
// The activations of an fp8 GEMV as the kernel's bf16 pair terms (kernels.h, GemvPlan::xp): rows [r0, r1) of
// each range of x [*, k] (f32, contiguous rows; other rows are not read and their terms left zero). One term per
// element when every element is a bf16 value (a bf16 model's activations), else three (exact for any f32). All
// rows share one power of two, exp2, chosen from their largest finite magnitude (to near 2^15).
struct PairActivations {
  Tensor buffer;   // uint16 terms, from the allocator (the memory record sees them)
  int terms = 0, exp2 = 0;
  int64_t ld = 0;  // uint16 elements per row
  Tensor wide;     // three terms: the scaled activations as f32 in gemv_pair_wide_slot order (ld floats per row)
  // Points plan.xp at row `row` (the plan's activation row 0).
  void plan(GemvPlan& p, int64_t row) const;
};
PairActivations pair_activations(const float* x, int64_t k, const std::vector<std::pair<int64_t, int64_t>>& rows);
// Fills the plan's epilogue fields: bias (or null) and out [M, N], f32 / bf16 / f16, any strides.
void plan_epilogue(GemvPlan& plan, const Tensor* bias, Tensor& out);
// x [M, K] (f32 / bf16 / f16, any strides) as a contiguous f32 tensor; x itself when it already is one.
Tensor activations_f32(const Tensor& x);
// The GEMV's x_exp2 for e4m3 weights over these activations (linear_decode.cpp says why): the power of two they
// are multiplied by before the GEMV reads them.
int e4m3_activation_exponent(const float* x, int64_t count);
// FP4 weights on the decode GEMV (fp4_weights.cpp): the activation rows [m, k] (f32, contiguous) in the layout the
// kernel wants (kernels.h, gemv_fp4_slot; K rounded up to kGemvFp4Group, zeros past it), and the plan's weight
// fields for the 2-D FP4 weight [N, K/2] with its block scale [N, K/block] and global scale.
Tensor fp4_activations(const float* x, int64_t m, int64_t k);
void plan_fp4_weight(GemvPlan& plan, const Tensor& weight, const Tensor& scale, float global,
                     const Tensor& activations);
// The B operand packer of an FP4 weight for the prefill GEMM (B = weight^T, [K, N]): each panel's elements
// dequantized as they are packed, never through a dequantized copy of the weight. `source` must outlive the
// GEMM.
struct Fp4PanelSource {
  const Tensor* weight;
  const Tensor* scale;
  const Tensor* global;
  int64_t nr;   // the level's panel width (gemm_nr)
};
PanelPacker fp4_panel_packer(const Fp4PanelSource& source);

// x [M <= 8, K] f32 / bf16 / f16 (any strides) against a k-contiguous weight of x's dtype, bf16 / f16 under
// f32 x, or fp8 with an f32 weight_scale.
bool linear_decode_covers(const LinearArgs& args);
void linear_decode(const LinearArgs& args, const GemvPieces& gemv);

// ---- scaled_mm (scaled_mm.cpp picks the route): a [M <= 8, K] fp8 (any strides) against b [K, N] fp8 with K
// contiguous (b = W^T), every recipe.
bool scaled_mm_decode_covers(const ScaledMmArgs& args);
void scaled_mm_decode(const ScaledMmArgs& args, const GemvPieces& gemv);
// Every other scaled_mm (more rows, or b N-contiguous): the packed GEMM with both fp8 operands scaled while
// packing (scaled_mm_prefill.cpp); out f32 / bf16 / f16, f32 scales, any strides.
bool scaled_mm_prefill_covers(const ScaledMmArgs& args);
void scaled_mm_prefill(const ScaledMmArgs& args, const GemmPieces& pieces);

}  // namespace fourfold::cpu
