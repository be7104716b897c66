// The arguments every tier's kernel receives for one op, after src/ops/ has checked them and allocated the
// outputs. Shapes here are the canonical ones the ops layer produces (noted per field); kernels may assume
// them and must accept any strides unless their covers() says otherwise.
#pragma once

#include <cstdint>
#include <vector>

#include "fourfold/op_modes.h"
#include "fourfold/tensor.h"

namespace fourfold {

enum class ScaleRecipe { tensorwise, rowwise, block_1x128, block_128x128 };

struct LinearArgs {
  const Tensor& x;        // [M, K]; f32, bf16, f16 (f64 for the oracle)
  const Tensor& weight;   // [N, K]; x's dtype, or bf16/f16 under f32 x, or fp8 with weight_scale
  const Tensor* bias;     // [N] or null; x's dtype
  Tensor& out;            // [M, N]; x's dtype
  // scaled_linear only (fp8 weight): f32 dequantization scale, [1, 1] (tensorwise), [N, 1] (rowwise) or
  // [ceil(N/128), ceil(K/128)] (block_128x128); the weight element (n, k) counts as weight[n, k] * scale.
  const Tensor* weight_scale = nullptr;
  ScaleRecipe weight_recipe = ScaleRecipe::tensorwise;
  // scaled_linear with an FP4 weight (float4_e2m1fn_x2 [N, K/2]): weight_scale is the block scale [N, K/block]
  // (core/fp4_blocks.h), weight_recipe unused, and this the one-element f32 global scale or null.
  const Tensor* global_scale = nullptr;
};

struct MatmulArgs {       // real or complex64; batch dims already broadcast (expanded views, stride 0)
  const Tensor& a;        // [*, M, K]
  const Tensor& b;        // [*, K, N]
  Tensor& out;            // [*, M, N]
};

enum class GroupedMmCase { a2d_b3d, a3d_b2d, a2d_b2d, a3d_b3d };
struct GroupedMmArgs {
  const Tensor& a;
  const Tensor& b;
  const Tensor* offs;     // int32 [G], validated (non-decreasing, in range); null for a3d_b3d
  GroupedMmCase kind;
  Tensor& out;            // see ops.h for each case's shape
};

// The experts of a sparse MoE block (fourfold/moe.h) over rows already sorted by expert: row r of expert e
// (offs[e-1] <= r < offs[e]) is token token_of_row[r] with routing weight row_weight[r].
struct MoeExpertsArgs {
  const Tensor& x;             // [T, H]; f32, bf16 (f64 for the oracle)
  const Tensor& gate;          // [E, I, H]; x's dtype, or fp8 e4m3fn with gate_scale
  const Tensor& up;            // [E, I, H]; as gate
  const Tensor& down;          // [E, H, I]; as gate
  const Tensor* gate_scale;    // fp8 only: f32 [E, ceil(I/128), ceil(H/128)] (weight_scale_inv as stored); else null
  const Tensor* up_scale;      // as gate_scale
  const Tensor* down_scale;    // f32 [E, ceil(H/128), ceil(I/128)]
  const Tensor& token_of_row;  // int32 [A], values in [0, T)
  const Tensor& row_weight;    // f32 [A]
  const Tensor& offs;          // int32 [E], validated: non-decreasing, offs[E-1] == A (values read on the host)
  Tensor& out;                 // [T, H], x's dtype; every element written (0 for a token without rows)
  // FP4 experts (all three projections float4_e2m1fn_x2 [E, out, in/2], the scales above their block scales
  // [E, out, in/block]): NVFP4's global scales, f32 [E], or null.
  const Tensor* gate_global = nullptr;
  const Tensor* up_global = nullptr;
  const Tensor* down_global = nullptr;
};

struct ScaledMmArgs {
  const Tensor& a;        // [M, K] fp8
  const Tensor& b;        // [K, N] fp8
  const Tensor& scale_a;  // f32, shape per recipe_a (tensorwise: reshaped to [1, 1])
  const Tensor& scale_b;  // f32, shape per recipe_b (tensorwise: [1, 1]); block_1x128 means 128x1 for b
  ScaleRecipe recipe_a;
  ScaleRecipe recipe_b;
  const Tensor* bias;     // [N] or null
  Tensor& out;            // [M, N]
};

struct SoftmaxArgs {
  const Tensor& x;
  int dim;                // normalized, 0 <= dim < rank
  Tensor& out;            // x's shape and dtype
};

struct SoftmaxBackwardArgs {
  const Tensor& grad_out;
  const Tensor& out;      // the forward output
  int dim;
  Tensor& grad_in;
};

struct PadArgs {
  const Tensor& x;
  const std::vector<int64_t>& pads;   // as given by the user, validated
  double value;
  Tensor& out;
};

struct AttentionArgs {
  const Tensor& q;        // [B, Hq, L, E]
  const Tensor& k;        // [B, Hk, S, E]
  const Tensor& v;        // [B, Hk, S, Ev]
  const Tensor* mask;     // null, or bool/float expanded to [B, Hq, L, S]
  CausalMode causal;
  double scale;           // resolved
  int64_t group;          // Hq / Hk (1 without GQA)
  Tensor& out;            // [B, Hq, L, Ev]
};

struct AttentionBackwardArgs {
  const Tensor& grad_out; // [B, Hq, L, Ev]
  const AttentionArgs& forward;   // forward.out is unused (may be an undefined tensor)
  Tensor& grad_q;
  Tensor& grad_k;
  Tensor& grad_v;
};

struct RmsNormArgs {
  const Tensor& x;        // [R, D]
  const Tensor* weight;   // [D] or null; x's dtype, or f32 (a zero-centred norm's 1 + w, kept exact)
  double eps;
  Tensor& out;            // [R, D]
  // add_rms_norm only: residual [R, D] (x's dtype); the op normalizes h = x + residual rounded to x's dtype,
  // and writes that h to sum_out [R, D] (contiguous). Both null for rms_norm.
  const Tensor* residual = nullptr;
  Tensor* sum_out = nullptr;
};

struct RmsNormBackwardArgs {
  const Tensor& grad_out; // [R, D]
  const Tensor& x;        // [R, D]
  const Tensor* weight;   // [D] or null
  double eps;
  Tensor& grad_x;         // [R, D]
  Tensor* grad_weight;    // [D] or null
};

struct LayerNormArgs {
  const Tensor& x;        // [R, D]
  const Tensor* weight;   // [D] or null
  const Tensor* bias;     // [D] or null
  double eps;
  Tensor& out;
};

struct GroupNormArgs {
  const Tensor& x;        // [N, C, S] (spatial dims flattened; S may be 1)
  int64_t groups;
  const Tensor* weight;   // [C] or null
  const Tensor* bias;     // [C] or null
  double eps;
  Tensor& out;
};

struct RotaryArgs {
  const Tensor& x;        // [..., D]
  const Tensor& cos;      // expanded to [..., R/2]
  const Tensor& sin;
  RotaryStyle style;
  Tensor& out;            // x's shape; new and contiguous, or x itself (rotary_embedding_): kernels must be alias-safe
};

struct UnaryArgs {
  const Tensor& x;
  Tensor& out;
};

struct GeluArgs {
  const Tensor& x;
  GeluApproximate approximate;
  Tensor& out;
};

struct BinaryArgs {       // add: out = a + alpha * b; mul: out = a * b; silu_mul: out = silu(a) * b (alpha unused)
  const Tensor& a;        // expanded to out's shape
  const Tensor& b;        // expanded to out's shape
  double alpha;
  Tensor& out;            // the promoted dtype
};

struct EmbeddingArgs {
  const Tensor& weight;   // [V, D]
  const Tensor& indices;  // [T], int32 or int64, validated in range
  Tensor& out;            // [T, D]
};

struct TopkArgs {
  const Tensor& x;
  int64_t k;
  int dim;                // normalized
  bool largest;
  bool sorted;
  Tensor& values;
  Tensor& indices;        // int64
};

struct ArgmaxArgs {
  const Tensor& x;        // when the user gave no dim: x flattened to [numel]
  int dim;                // normalized
  Tensor& out;            // int64, keepdim shape (size 1 at dim)
};

struct ConvArgs {         // conv2d and conv3d; spatial rank = x.dim() - 2
  const Tensor& x;        // [N, C, *spatial]
  const Tensor& weight;   // [O, C / groups, *kernel]
  const Tensor* bias;     // [O] or null
  const std::vector<int64_t>& stride;
  const std::vector<int64_t>& padding;
  const std::vector<int64_t>& dilation;
  int64_t groups;
  Tensor& out;            // [N, O, *out_spatial]
};

struct ChannelNormArgs {
  const Tensor& x;        // [N, C, S]: S the positions (the dims after the channels, flattened)
  const Tensor* weight;   // [C] or null; x's dtype
  double eps;
  bool silu;              // silu of each normalized value, taken after it is rounded to x's dtype
  Tensor& out;            // [N, C, S] contiguous, x's dtype
};

// The depthwise causal convolution of linear-attention layers (Gated DeltaNet's, Mamba's short conv).
struct CausalConv1dArgs {
  const Tensor& x;        // [B, C, T] (any strides: a channel-last view is the engine's layout)
  const Tensor& weight;   // [C, K]; f32, bf16 or f16
  const Tensor* bias;     // [C] or null; weight's dtype
  Tensor* state;          // [B, C, K-1] or null; x's dtype. Read as the K-1 inputs before x[..., 0] (zeros when
                          // null), then overwritten with the last K-1 columns of [state, x]
  bool silu;              // silu of the f32 sum, before the one rounding
  Tensor& out;            // [B, C, T], x's dtype; never overlaps state
};

// The gated delta rule (Gated DeltaNet's recurrence; fourfold/ops.h). Every tier computes the same math; `mode`
// picks the order of the f32 work on the tiers that have both forms (the reference always steps token by token).
struct GatedDeltaRuleArgs {
  const Tensor& q;        // [B, T, Hk, Dk]
  const Tensor& k;        // [B, T, Hk, Dk]
  const Tensor& v;        // [B, T, Hv, Dv], Hv a multiple of Hk: value head h reads key head h / (Hv / Hk)
  const Tensor& g;        // [B, T, Hv]: the log decay (or, with a_log, the raw gate a)
  const Tensor& beta;     // [B, T, Hv]: the write strength (or, with a_log, the raw logit b)
  const Tensor* a_log;    // [Hv] or null: g = -exp(a_log) * softplus(a + dt_bias), beta = sigmoid(b), in f32
  const Tensor* dt_bias;  // [Hv] with a_log, else null
  Tensor* state;          // [B, Hv, Dk, Dv] f32 or null (zeros, not kept); updated in place
  double scale;           // q's scale, after the L2 norm
  bool qk_l2norm;         // q and k L2-normalized over Dk first: x / sqrt(sum x^2 + 1e-6)
  GatedDeltaMode mode;    // recurrent, chunked, or auto: the tier's own choice
  int64_t chunk_size;     // chunked only
  Tensor& out;            // [B, T, Hv, Dv], v's dtype
};

// Gated DeltaNet's output norm: rms_norm of x, times weight, times silu(gate).
struct RmsNormGatedArgs {
  const Tensor& x;        // [R, D]
  const Tensor& gate;     // [R, D]; x's dtype
  const Tensor* weight;   // [D] or null; x's dtype or f32
  double eps;
  Tensor& out;            // [R, D], x's dtype
};

struct UpsampleArgs {
  const Tensor& x;        // [N, C, *spatial]
  Tensor& out;            // [N, C, *output_size]
};

struct LinearBackwardArgs {
  const Tensor& grad_out; // [M, N]
  const Tensor& x;        // [M, K]
  const Tensor& weight;   // [N, K]
  Tensor& grad_x;         // [M, K]
  Tensor& grad_weight;    // [N, K]
  Tensor* grad_bias;      // [N] or null
};

}  // namespace fourfold
