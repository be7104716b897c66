// The dedicated CPU tier's ops: planning, Tensor access and threading, written once (baseline ISA), each
// calling the per-ISA pieces (kernels/kernels.h) it is handed.
#pragma once

#include "backends/cpu/gemm.h"
#include "backends/cpu/kernels/kernels.h"
#include "backends/op_args.h"

#include <utility>
#include <vector>

namespace fourfold::cpu {

using PadRowsFn = void (*)(const PadPlan&, int64_t, int64_t);
void constant_pad_nd(const PadArgs& args, PadRowsFn pad_rows);

struct SoftmaxPieces {
  RowStats (*stats)(const void*, RowType, int64_t, float*, float*);
  void (*write)(const void*, void*, RowType, int64_t, float, float, bool, bool);
  void (*write_kept)(const float*, const float*, void*, RowType, int64_t, float, float, bool);
};
// Contiguous rows along the last dim, f32 / bf16 / f16.
bool softmax_covers(const SoftmaxArgs& args);
void softmax(const SoftmaxArgs& args, bool log, const SoftmaxPieces& pieces);

// GEMM-based ops (gemm.h's driver). linear: the packed GEMM for prefill, more than kLinearDecodeMaxRows rows
// (fewer rows are the decode GEMV's, linear_decode.cpp); fp8 weights (scaled_linear) with an f32 scale too.
inline constexpr int64_t kLinearDecodeMaxRows = kGemvMaxM;   // the GEMV (kernels.h) takes the rest
bool linear_prefill_covers(const LinearArgs& args);
void linear_prefill(const LinearArgs& args, const GemmPieces& pieces);
// matmul / bmm: real f32/bf16/f16 and complex64, any strides and broadcast batches.
bool matmul_covers(const MatmulArgs& args);
using MatmulRowsFn = void (*)(const MatmulRowsPlan&, int64_t, int64_t);
void matmul(const MatmulArgs& args, const GemmPieces& pieces, MatmulRowsFn rows);
// linear_backward: grad_x = g W, grad_weight = g^T x, grad_bias = column sums of g, in one parallel region.
bool linear_backward_covers(const LinearBackwardArgs& args);
void linear_backward(const LinearBackwardArgs& args, const GemmPieces& pieces);
// conv2d / conv3d (conv_nd.cpp): groups 1, f32 / bf16 / f16, any stride, padding and dilation, x of any
// strides, a contiguous weight; the packed GEMM with B gathered from the input window (kernels/conv_pack.cpp).
struct ConvPieces {
  GemmPieces gemm;
  void (*pack_b)(const void*, int64_t, int64_t, int64_t, int64_t, float*);
  void (*pack_b_pairs)(const void*, int64_t, int64_t, int64_t, int64_t, float*);
};
bool conv_covers(const ConvArgs& args);
void conv(const ConvArgs& args, const ConvPieces& pieces);
struct AttentionPieces {
  void (*tile)(const AttnTile&);
};
// f32 / bf16 / f16; K and V rows with contiguous elements (any other strides).
bool attention_covers(const AttentionArgs& args);
void scaled_dot_product_attention(const AttentionArgs& args, const AttentionPieces& pieces);
// ---- fused decoder helpers and softmax backward (rms_norm.cpp, rotary_embedding.cpp, silu_mul.cpp,
// softmax_backward.cpp). Each covers f32 / bf16 / f16 with every operand of one dtype and unit stride along
// the last dim (rotary and rms_norm accept any outer strides; silu_mul and the backward want contiguous).

using RmsNormRowFn = void (*)(const RmsNormRow&, RowType, int64_t, double);
bool rms_norm_covers(const RmsNormArgs& args);
void rms_norm(const RmsNormArgs& args, RmsNormRowFn row);
// channel_rms_norm of contiguous x and out (channel_rms_norm.cpp): runs of positions in parallel.
using ChannelNormFn = void (*)(const ChannelNormRun&, RowType, int64_t, int64_t, double, bool);
bool channel_rms_norm_covers(const ChannelNormArgs& args);
void channel_rms_norm(const ChannelNormArgs& args, ChannelNormFn run);

using RotaryRowFn = void (*)(const RotaryRow&, RowType, int64_t, int64_t, bool);
bool rotary_embedding_covers(const RotaryArgs& args);
void rotary_embedding(const RotaryArgs& args, RotaryRowFn row);

// ---- the decode step's selections and gather (select.cpp): topk and argmax over contiguous last-dim rows of
// f32 / bf16 / f16 in the reference's order; embedding rows copied as they are.
bool topk_covers(const TopkArgs& args);
void topk(const TopkArgs& args);
bool argmax_covers(const ArgmaxArgs& args);
void argmax(const ArgmaxArgs& args);
bool embedding_covers(const EmbeddingArgs& args);
void embedding(const EmbeddingArgs& args);

// upsample_nearest for integer factors on inputs dense in their spatial dims (upsample_nearest.cpp): each
// input row widened once, then copied to the output rows it fills.
bool upsample_nearest_covers(const UpsampleArgs& args);
void upsample_nearest(const UpsampleArgs& args);

using SiluMulFn = void (*)(const void*, const void*, void*, RowType, int64_t);
bool silu_mul_covers(const BinaryArgs& args);
void silu_mul(const BinaryArgs& args, SiluMulFn fn);

struct SoftmaxBackwardPieces {
  double (*dot)(const void*, const void*, RowType, int64_t, bool);
  void (*write)(const void*, const void*, void*, RowType, int64_t, double, bool);
};
bool softmax_backward_covers(const SoftmaxBackwardArgs& args);
void softmax_backward(const SoftmaxBackwardArgs& args, bool log, const SoftmaxBackwardPieces& pieces);
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
struct GroupedPieces {
  DotTileFn dot;
  GemvPieces gemv;
  GemmPieces gemm;
  SiluMulFn silu_mul;   // moe_experts' silu(gate) * up
};
bool grouped_mm_covers(const GroupedMmArgs& args);
void grouped_mm(const GroupedMmArgs& args, const GroupedPieces& pieces);
bool moe_experts_covers(const MoeExpertsArgs& args);
void moe_experts(const MoeExpertsArgs& args, const GroupedPieces& pieces);
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

// x [M <= 8, K] f32 / bf16 / f16 (any strides) against a k-contiguous weight of x's dtype, bf16 / f16 under
// f32 x, or fp8 with an f32 weight_scale.
bool linear_decode_covers(const LinearArgs& args);
void linear_decode(const LinearArgs& args, const GemvPieces& gemv);

// a [M <= 8, K] fp8 (any strides) against b [K, N] fp8 with K contiguous (b = W^T), every recipe.
bool scaled_mm_decode_covers(const ScaledMmArgs& args);
void scaled_mm_decode(const ScaledMmArgs& args, const GemvPieces& gemv);
// Every other scaled_mm (more rows, or b N-contiguous): the packed GEMM with both fp8 operands scaled while
// packing (scaled_mm_prefill.cpp); out f32 / bf16 / f16, f32 scales, any strides.
bool scaled_mm_prefill_covers(const ScaledMmArgs& args);
void scaled_mm_prefill(const ScaledMmArgs& args, const GemmPieces& pieces);

}  // namespace fourfold::cpu
