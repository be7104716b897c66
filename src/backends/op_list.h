// The op list: the only one. Every kernel table, the force-policy names and the dispatch counters are
// generated from it, so adding a line here makes the compiler point at every tier that lacks the op.
#pragma once

#include "backends/op_args.h"

// X(name, Args): name is the op's PyTorch name and its file basename everywhere.
#define FOURFOLD_OP_LIST(X)                                   \
  X(linear, LinearArgs)                                       \
  X(matmul, MatmulArgs)                                       \
  X(grouped_mm, GroupedMmArgs)                                \
  X(moe_experts, MoeExpertsArgs)                              \
  X(scaled_mm, ScaledMmArgs)                                  \
  X(softmax, SoftmaxArgs)                                     \
  X(log_softmax, SoftmaxArgs)                                 \
  X(constant_pad_nd, PadArgs)                                 \
  X(scaled_dot_product_attention, AttentionArgs)              \
  X(rms_norm, RmsNormArgs)                                    \
  X(channel_rms_norm, ChannelNormArgs)                        \
  X(layer_norm, LayerNormArgs)                                \
  X(group_norm, GroupNormArgs)                                \
  X(rotary_embedding, RotaryArgs)                             \
  X(silu, UnaryArgs)                                          \
  X(sigmoid, UnaryArgs)                                       \
  X(silu_mul, BinaryArgs)                                     \
  X(gelu, GeluArgs)                                           \
  X(add, BinaryArgs)                                          \
  X(mul, BinaryArgs)                                          \
  X(embedding, EmbeddingArgs)                                 \
  X(topk, TopkArgs)                                           \
  X(argmax, ArgmaxArgs)                                       \
  X(conv2d, ConvArgs)                                         \
  X(conv3d, ConvArgs)                                         \
  X(upsample_nearest, UpsampleArgs)                           \
  X(causal_conv1d, CausalConv1dArgs)                          \
  X(gated_delta_rule, GatedDeltaRuleArgs)                     \
  X(rms_norm_gated, RmsNormGatedArgs)                         \
  X(linear_backward, LinearBackwardArgs)                      \
  X(softmax_backward, SoftmaxBackwardArgs)                    \
  X(log_softmax_backward, SoftmaxBackwardArgs)                \
  X(constant_pad_nd_backward, PadArgs)                        \
  X(rms_norm_backward, RmsNormBackwardArgs)                   \
  X(scaled_dot_product_attention_backward, AttentionBackwardArgs)

namespace fourfold {

enum class OpId {
#define FOURFOLD_OP_ENUM(name, Args) name,
  FOURFOLD_OP_LIST(FOURFOLD_OP_ENUM)
#undef FOURFOLD_OP_ENUM
};

#define FOURFOLD_OP_COUNT_ONE(name, Args) +1
inline constexpr int kOpCount = 0 FOURFOLD_OP_LIST(FOURFOLD_OP_COUNT_ONE);
#undef FOURFOLD_OP_COUNT_ONE

}  // namespace fourfold
