// The generic tier's kernels and the cases each covers (anything else falls through to the reference tier).
#pragma once

#include "backends/op_args.h"

namespace fourfold::generic {

void softmax(const SoftmaxArgs& args);
void log_softmax(const SoftmaxArgs& args);
bool softmax_covers(const SoftmaxArgs& args);

void constant_pad_nd(const PadArgs& args);
bool constant_pad_nd_covers(const PadArgs& args);

void linear(const LinearArgs& args);
bool linear_covers(const LinearArgs& args);
// The matrix products' last passes: out = product [M, N] f32 (+ bias [N] per column pass), converted once.
void finish_product(const Tensor& product, const Tensor* bias, Tensor& out);

void scaled_mm(const ScaledMmArgs& args);
bool scaled_mm_covers(const ScaledMmArgs& args);

void matmul(const MatmulArgs& args);
bool matmul_covers(const MatmulArgs& args);

void linear_backward(const LinearBackwardArgs& args);
bool linear_backward_covers(const LinearBackwardArgs& args);

void rms_norm(const RmsNormArgs& args);
bool rms_norm_covers(const RmsNormArgs& args);
// x [rows, d] (contiguous f32) / sqrt(mean of the row's squares + eps) * weight[d] (or none), each a pass into
// its own temporary; the result a new f32 temporary.
Tensor rms_rows_f32(const Tensor& x, const Tensor* weight, double eps);
// silu of x (contiguous f32) as a new f32 temporary: negate, exp, add one, reciprocal, multiply by x.
Tensor silu_f32(const Tensor& x);

// channel_rms_norm as the composition it replaces: the channels-last copy, rms_norm's rows, the silu passes and
// the copy back.
void channel_rms_norm(const ChannelNormArgs& args);
bool channel_rms_norm_covers(const ChannelNormArgs& args);
void rms_norm_backward(const RmsNormBackwardArgs& args);
bool rms_norm_backward_covers(const RmsNormBackwardArgs& args);

void layer_norm(const LayerNormArgs& args);
bool layer_norm_covers(const LayerNormArgs& args);
void group_norm(const GroupNormArgs& args);
bool group_norm_covers(const GroupNormArgs& args);

void rotary_embedding(const RotaryArgs& args);
bool rotary_embedding_covers(const RotaryArgs& args);

void embedding(const EmbeddingArgs& args);

void softmax_backward(const SoftmaxBackwardArgs& args);
void log_softmax_backward(const SoftmaxBackwardArgs& args);
bool softmax_backward_covers(const SoftmaxBackwardArgs& args);

void silu(const UnaryArgs& args);
bool silu_covers(const UnaryArgs& args);
void silu_mul(const BinaryArgs& args);
bool silu_mul_covers(const BinaryArgs& args);
void gelu(const GeluArgs& args);
bool gelu_covers(const GeluArgs& args);

void add(const BinaryArgs& args);
void mul(const BinaryArgs& args);
bool binary_covers(const BinaryArgs& args);

void scaled_dot_product_attention(const AttentionArgs& args);
bool attention_covers(const AttentionArgs& args);
void grouped_mm(const GroupedMmArgs& args);
bool grouped_mm_covers(const GroupedMmArgs& args);

void moe_experts(const MoeExpertsArgs& args);
bool moe_experts_covers(const MoeExpertsArgs& args);

// upsample_nearest for integer factors: the input expanded into a split view of the output, one copy.
void upsample_nearest(const UpsampleArgs& args);
bool upsample_nearest_covers(const UpsampleArgs& args);

// conv2d and conv3d (conv_nd.cpp): every stride, padding, dilation and group count, f32 / bf16 / f16.
void conv(const ConvArgs& args);
bool conv_covers(const ConvArgs& args);
// The same with the im2col temporary of each band of output rows bounded by columns_bytes (at least one row).
void conv_in_bands(const ConvArgs& args, int64_t columns_bytes);

}  // namespace fourfold::generic
