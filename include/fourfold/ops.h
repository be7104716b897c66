// The op API: PyTorch's names and semantics. Every call goes through the dispatcher (src/ops/dispatch.h),
// which picks the dedicated, generic or reference tier under the force policy (fourfold/policy.h).
// Unless a function says otherwise: inputs may be any strided views; outputs are new contiguous tensors;
// floating inputs of one op must share a dtype (PyTorch would promote; fourfold refuses with DTypeError,
// because a silent promotion hides a slow path), except add and mul, which promote like PyTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "fourfold/op_modes.h"
#include "fourfold/tensor.h"

namespace fourfold {

using OptTensor = std::optional<Tensor>;

// ---------------------------------------------------------------- matrix products
// x [..., K], weight [N, K], bias [N] -> [..., N]; f32, f16, bf16 (f64 for the oracle), one dtype for all,
// with one exception that decode needs: under f32 x the weight may be stored in bf16 or f16 (weight-only
// low precision; the output and bias stay f32).
Tensor linear(const Tensor& x, const Tensor& weight, const OptTensor& bias = std::nullopt);
// Weight-only FP8 linear, the path of Hugging Face FP8 checkpoints: out = x @ (weight * scale)^T + bias.
// weight [N, K] float8_e4m3fn or float8_e5m2; weight_scale f32, the dequantization scale (a checkpoint's
// weight_scale_inv as stored): [] / [1] / [1, 1] tensorwise, [N, 1] rowwise, [ceil(N/128), ceil(K/128)]
// 128x128 blocks. x f32 or bf16 (f64 for the oracle); bias and out in x's dtype.
// FP4 weights (NVFP4, MXFP4; core/fp4_blocks.h): weight float4_e2m1fn_x2 [N, K/2], weight_scale float8_e4m3fn
// [N, K/16] or float8_e8m0fnu [N, K/32], global_scale a one-element f32 multiplier (NVFP4's second level) or
// absent: element (n, k) counts as e2m1(n, k) * weight_scale[n, k / block] * global_scale. Products are exact
// and sums f32 at every tier but the reference's float64.
Tensor scaled_linear(const Tensor& x, const Tensor& weight, const Tensor& weight_scale,
                     const OptTensor& bias = std::nullopt, const OptTensor& global_scale = std::nullopt);

// torch.matmul: 1-D x 1-D is a dot product (0-D result); 1-D operands are promoted by a size-1 dim that is
// removed afterwards; batch dims broadcast. Real floating types and complex64.
Tensor matmul(const Tensor& a, const Tensor& b);
// torch.bmm: a [B, M, K], b [B, K, N] -> [B, M, N], no broadcasting.
Tensor bmm(const Tensor& a, const Tensor& b);

// torch._grouped_mm (torch.nn.functional.grouped_mm). offs: int32 [G], cumulative end offsets, non-decreasing,
// last <= the sliced extent; empty groups allowed.
//   2D x 3D: a [M_total, K], b [G, K, N]  -> out [M_total, N]; rows of a sliced by offs.
//   3D x 2D: a [G, M, K],     b [K, N_total] -> out [M, N_total]; columns of b sliced by offs.
//   2D x 2D: a [M, K_total],  b [K_total, N] -> out [G, M, N]; K sliced by offs (an empty group gives zeros).
//   3D x 3D: a [G, M, K],     b [G, K, N]  -> out [G, M, N]; offs must be absent.
// Rows (2Dx3D) or columns (3Dx2D) past offs[G-1] are not written by the kernels; grouped_mm() returns them
// as zeros, grouped_mm_out() leaves them as they were in `out`. out_dtype: default a's dtype; f32 allowed.
Tensor grouped_mm(const Tensor& a, const Tensor& b, const OptTensor& offs = std::nullopt,
                  std::optional<DType> out_dtype = std::nullopt);
void grouped_mm_out(Tensor& out, const Tensor& a, const Tensor& b, const OptTensor& offs = std::nullopt);

// torch._scaled_mm for FP8: out = (a * scale_a) @ (b * scale_b) + bias, a [M, K] and b [K, N] in
// float8_e4m3fn or float8_e5m2 (mixing allowed), scales f32 and multiplied (dequantization scales).
// The recipe is read from the scale shapes (kb = ceil(K/128), mb = ceil(M/128), nb = ceil(N/128)):
//   scale_a: [] or [1] or [1,1] tensorwise | [M, 1] rowwise | [M, kb] 1x128 blocks | [mb, kb] 128x128 blocks
//   scale_b: [] or [1] or [1,1] tensorwise | [1, N] rowwise | [kb, N] 128x1 blocks | [kb, nb] 128x128 blocks
// scale_b is given in b's [K, N] orientation; PyTorch states the same grids for b^T ([N, K]); a checkpoint's
// weight_scale_inv [nb, kb] for a weight W [N, K] is passed as scale_inv.transpose(0, 1) with b = W^T (views).
// Where two recipes give the same shape they compute the same thing. bias: [N], f32 or bf16.
// out_dtype: bf16 (default), f32 or f16 (f64 for the oracle).
Tensor scaled_mm(const Tensor& a, const Tensor& b, const Tensor& scale_a, const Tensor& scale_b,
                 const OptTensor& bias = std::nullopt, DType out_dtype = DType::bf16);

// ---------------------------------------------------------------- normalisation and activations
// torch.softmax / log_softmax along `dim`. A row of all -inf gives NaN (0/0), as PyTorch does; NaN propagates.
Tensor softmax(const Tensor& x, int dim);
Tensor log_softmax(const Tensor& x, int dim);

// RMS norm over the channels of a channel-first tensor x [N, C, *] (rank >= 2; dim 1), at every position:
//   y = x / sqrt(mean over C of x^2 + eps) * weight[c]   (weight [C], x's dtype, or none)
// and with silu, silu(y) of y rounded to x's dtype: silu(channel_rms_norm(x, ...)) in one pass. diffusers'
// WanRMS_norm (F.normalize(x, dim=1) * sqrt(C) * gamma) is this with eps = 1e-24 / C, but for a position whose
// channels are all near zero (below 1e-12 in norm). No PyTorch op has this name; the result is x's shape and dtype.
Tensor channel_rms_norm(const Tensor& x, const OptTensor& weight, double eps, bool silu = false);

// torch.nn.functional.rms_norm: normalized over the trailing dims given by normalized_shape;
// eps default (nullopt) = the machine epsilon of x's dtype, as PyTorch. weight: x's dtype, or f32 under a bf16 or
// f16 x (the zero-centred norms of Qwen3.5 / Qwen3-Next multiply by 1 + w in f32 and round once, which an x-dtype
// 1 + w would round first).
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const OptTensor& weight = std::nullopt,
                std::optional<double> eps = std::nullopt);
// The decoder's fused residual step: h = x + residual (rounded to x's dtype, as PyTorch's add), returns
// (rms_norm(h, normalized_shape, weight, eps), h), reading each input once. residual: x's shape and dtype.
std::pair<Tensor, Tensor> add_rms_norm(const Tensor& x, const Tensor& residual, const Shape& normalized_shape,
                                       const OptTensor& weight = std::nullopt,
                                       std::optional<double> eps = std::nullopt);
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const OptTensor& weight = std::nullopt,
                  const OptTensor& bias = std::nullopt, double eps = 1e-5);
// x [N, C, *], C divisible by num_groups; weight, bias [C].
Tensor group_norm(const Tensor& x, int64_t num_groups, const OptTensor& weight = std::nullopt,
                  const OptTensor& bias = std::nullopt, double eps = 1e-5);

// Rotary position embedding on the last dim of x [..., D]. cos and sin [..., R/2] broadcast against
// x[..., :R/2] (R = 2 * cos.size(-1) <= D is the rotated width; dims past R pass through unchanged).
//   half_split (GPT-NeoX / Hugging Face rotate_half): pairs (i, i + R/2)
//   interleaved (GPT-J): pairs (2i, 2i + 1)
// Each pair (a, b) becomes (a cos - b sin, b cos + a sin).
Tensor rotary_embedding(const Tensor& x, const Tensor& cos, const Tensor& sin,
                        RotaryStyle style = RotaryStyle::half_split);
// The same, written into x in place (any strides; x must not overlap cos or sin).
void rotary_embedding_(Tensor& x, const Tensor& cos, const Tensor& sin, RotaryStyle style = RotaryStyle::half_split);

Tensor silu(const Tensor& x);
// torch.sigmoid: 1 / (1 + exp(-x)), so sigmoid(-inf) is 0 and sigmoid(inf) is 1.
Tensor sigmoid(const Tensor& x);
// The SwiGLU gate: silu(gate) * up, one pass. gate and up: one float dtype, one shape (no broadcasting).
Tensor silu_mul(const Tensor& gate, const Tensor& up);
Tensor gelu(const Tensor& x, GeluApproximate approximate = GeluApproximate::none);

// torch.add(a, b, alpha=alpha) and torch.mul with broadcasting and PyTorch's type promotion.
Tensor add(const Tensor& a, const Tensor& b, double alpha = 1.0);
Tensor mul(const Tensor& a, const Tensor& b);

// ---------------------------------------------------------------- linear attention (Gated DeltaNet)
// The depthwise causal convolution of linear-attention layers, as the causal-conv1d package's causal_conv1d_fn and
// causal_conv1d_update: x [B, C, T] (any strides), weight [C, K], bias [C] or none ->
//   out[b, c, t] = act(bias[c] + sum_j weight[c, j] * xs[b, c, t + j])   (j in [0, K))
// where xs is x preceded by K-1 columns: conv_state's [B, C, K-1] when given (a decode step's past inputs),
// else zeros (a prompt's start). conv_state is then overwritten in place with the last K-1 columns of [state, x]:
// what the next call needs. act is silu (fused, on the f32 sum) or none. The output has x's shape and dtype, and
// its layout when x is channel-last (stride 1 along C): the linear layers keep [T, C] rows. x and conv_state:
// one float dtype; weight and bias f32, bf16 or f16.
Tensor causal_conv1d(const Tensor& x, const Tensor& weight, const OptTensor& bias = std::nullopt,
                     const OptTensor& conv_state = std::nullopt, bool silu = false);

// The gated delta rule of Gated DeltaNet (FLA's chunk_gated_delta_rule / fused_recurrent_gated_delta_rule, and
// transformers' torch_*_gated_delta_rule): q, k [B, T, Hk, Dk], v [B, T, Hv, Dv] with Hv a multiple of Hk
// (value head h reads key head h / (Hv / Hk)), g and beta [B, T, Hv]. With q and k L2-normalized over Dk
// (qk_l2norm: x / sqrt(sum x^2 + 1e-6)) and q scaled, for each token t and value head, on the state S [Dk, Dv]:
//   S = exp(g_t) * S;   S += k_t (beta_t * (v_t - S^T k_t))^T;   o_t = S^T q_t.
// state [B, Hv, Dk, Dv] f32 is read and updated in place (none: zeros, and the final state is dropped).
// Returns o [B, T, Hv, Dv] in v's dtype. g is f32 (the log decay, <= 0 in the models); beta f32, bf16 or f16;
// q, k and v one float dtype. Every tier computes in f32 or above; mode picks the order of that work (chunked:
// chunk_size tokens at a time as small matrix products, transformers' prefill form; recurrent: token by token;
// auto: the tier's choice, fourfold/op_modes.h).
struct GatedDeltaRuleOptions {
  std::optional<double> scale;             // default 1 / sqrt(Dk)
  bool qk_l2norm = true;
  GatedDeltaMode mode = GatedDeltaMode::auto_;
  int64_t chunk_size = 64;
  // The gates as the model computes them, fused: when a_log [Hv] and dt_bias [Hv] are given, g holds the raw
  // gate a and beta the raw logit b, and g = -exp(a_log) * softplus(a + dt_bias), beta = sigmoid(b) in f32.
  OptTensor a_log, dt_bias;
};
Tensor gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g, const Tensor& beta,
                        const OptTensor& state = std::nullopt, const GatedDeltaRuleOptions& options = {});

// Gated DeltaNet's output norm (FLA's FusedRMSNormGated, transformers' Qwen3_5RMSNormGated) over the last dim D:
//   out = (weight * round(x * rsqrt(mean(x^2) + eps))) * silu(gate)
// with transformers' roundings to x's dtype: the normed x, its product with the weight, and the result (silu of
// gate and that last product in f32). x and gate one float dtype and shape; weight [D] (x's dtype or f32) or none.
Tensor rms_norm_gated(const Tensor& x, const Tensor& gate, const OptTensor& weight = std::nullopt, double eps = 1e-6);

// ---------------------------------------------------------------- indexing and reductions
// weight [V, D], indices int32 or int64 of any shape -> [*indices.shape, D]. An index outside [0, V) is a
// ValueError naming it (PyTorch raises IndexError).
Tensor embedding(const Tensor& weight, const Tensor& indices);
// torch.topk: values and int64 indices along dim. NaN counts as larger than every number (PyTorch);
// ties keep the lower index first. k in [0, size(dim)].
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int dim = -1, bool largest = true, bool sorted = true);
// torch.argmax: int64; dim = nullopt flattens. NaN is the maximum; ties give the first index.
Tensor argmax(const Tensor& x, std::optional<int> dim = std::nullopt, bool keepdim = false);

// ---------------------------------------------------------------- convolution and resampling
// torch.nn.functional.conv2d: x [N, C, H, W], weight [O, C/groups, kH, kW], bias [O].
Tensor conv2d(const Tensor& x, const Tensor& weight, const OptTensor& bias = std::nullopt,
              std::vector<int64_t> stride = {1, 1}, std::vector<int64_t> padding = {0, 0},
              std::vector<int64_t> dilation = {1, 1}, int64_t groups = 1);
// torch.nn.functional.conv3d: x [N, C, T, H, W], weight [O, C/groups, kT, kH, kW].
Tensor conv3d(const Tensor& x, const Tensor& weight, const OptTensor& bias = std::nullopt,
              std::vector<int64_t> stride = {1, 1, 1}, std::vector<int64_t> padding = {0, 0, 0},
              std::vector<int64_t> dilation = {1, 1, 1}, int64_t groups = 1);
// The causal-video-VAE convolution: constant_pad_nd with (kW-1)/2 on both sides of W, (kH-1)/2 on both sides
// of H and kT-1 frames before T (none after), then conv3d without padding: output frame t sees frames <= t.
// Odd kH and kW required. stride applies to (T, H, W).
Tensor causal_conv3d(const Tensor& x, const Tensor& weight, const OptTensor& bias = std::nullopt,
                     std::vector<int64_t> stride = {1, 1, 1}, double pad_value = 0.0);
// Nearest-neighbour upsampling (torch's mode='nearest', not 'nearest-exact'): x [N, C, *spatial] with 1 to 3
// spatial dims; output_size one per spatial dim; src = floor(dst * in / out).
Tensor upsample_nearest(const Tensor& x, const std::vector<int64_t>& output_size);

// ---------------------------------------------------------------- padding
// torch.nn.functional.pad(mode='constant') = torch.constant_pad_nd. pads: pairs (before, after) from the last
// dim backwards, at most 2 * rank entries; negative entries crop. A resulting size below 0 is a ShapeError;
// 0 is allowed. value is converted to x's dtype. Any dtype, rank <= 8.
Tensor constant_pad_nd(const Tensor& x, const std::vector<int64_t>& pads, double value = 0.0);

// ---------------------------------------------------------------- attention
struct AttentionOptions {
  OptTensor attn_mask;                 // bool (true attends) or float (added); broadcasts to [..., L, S]
  CausalMode causal = CausalMode::none;
  std::optional<double> scale;         // default 1 / sqrt(E)
  bool enable_gqa = false;             // q heads Hq = n * KV heads: q head h uses KV head h / n
};
// q [..., Hq, L, E], k [..., Hk, S, E], v [..., Hk, S, Ev] -> [..., Hq, L, Ev]. A mask together with causal
// is a ValueError (as PyTorch). A query row with no key to attend gives zeros: PyTorch's math backend since
// 2.5 (_safe_softmax) does this rather than NaN.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const AttentionOptions& options = {});
// PyTorch's signature, for recognition: is_causal maps to CausalMode::top_left.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const OptTensor& attn_mask,
                                    bool is_causal, std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false);

// ---------------------------------------------------------------- complex
// Complex64 matmul goes through matmul/bmm (complex64 operands, no conjugation).

// ---------------------------------------------------------------- backward
struct LinearGrads { Tensor grad_x, grad_weight, grad_bias; };   // grad_bias undefined when has_bias is false
LinearGrads linear_backward(const Tensor& grad_out, const Tensor& x, const Tensor& weight, bool has_bias);
// PyTorch's _softmax_backward_data / _log_softmax_backward_data: take the forward *output*.
Tensor softmax_backward(const Tensor& grad_out, const Tensor& out, int dim);
Tensor log_softmax_backward(const Tensor& grad_out, const Tensor& out, int dim);
// The gradient of constant_pad_nd: grad_out cropped back to the input's shape (padding negated).
Tensor constant_pad_nd_backward(const Tensor& grad_out, const std::vector<int64_t>& pads);
struct RmsNormGrads { Tensor grad_x, grad_weight; };              // grad_weight undefined without weight
RmsNormGrads rms_norm_backward(const Tensor& grad_out, const Tensor& x, const Shape& normalized_shape,
                               const OptTensor& weight = std::nullopt, std::optional<double> eps = std::nullopt);
struct AttentionGrads { Tensor grad_q, grad_k, grad_v; };
AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const AttentionOptions& options = {});

}  // namespace fourfold
