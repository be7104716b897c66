// The generic tier's kernel table: the ops composed from primitives so far; a null entry falls through to the
// reference tier.
#include "backends/generic/generic.h"
#include "backends/kernel_table.h"

namespace fourfold {

const KernelTable* generic_kernels() {
  static const KernelTable table = [] {
    KernelTable t;
    t.linear = {&generic::linear, &generic::linear_covers, "generic"};
    t.matmul = {&generic::matmul, &generic::matmul_covers, "generic"};
    t.linear_backward = {&generic::linear_backward, &generic::linear_backward_covers, "generic"};
    t.scaled_mm = {&generic::scaled_mm, &generic::scaled_mm_covers, "generic"};
    t.softmax = {&generic::softmax, &generic::softmax_covers, "generic"};
    t.log_softmax = {&generic::log_softmax, &generic::softmax_covers, "generic"};
    t.constant_pad_nd = {&generic::constant_pad_nd, &generic::constant_pad_nd_covers, "generic"};
    // The backward is the forward with the pads negated (a crop): the same fill-then-copy composition.
    t.constant_pad_nd_backward = {&generic::constant_pad_nd, &generic::constant_pad_nd_covers, "generic"};
    t.rms_norm = {&generic::rms_norm, &generic::rms_norm_covers, "generic"};
    t.channel_rms_norm = {&generic::channel_rms_norm, &generic::channel_rms_norm_covers, "generic"};
    t.rms_norm_backward = {&generic::rms_norm_backward, &generic::rms_norm_backward_covers, "generic"};
    t.layer_norm = {&generic::layer_norm, &generic::layer_norm_covers, "generic"};
    t.group_norm = {&generic::group_norm, &generic::group_norm_covers, "generic"};
    t.rotary_embedding = {&generic::rotary_embedding, &generic::rotary_embedding_covers, "generic"};
    t.embedding = {&generic::embedding, nullptr, "generic"};
    t.softmax_backward = {&generic::softmax_backward, &generic::softmax_backward_covers, "generic"};
    t.log_softmax_backward = {&generic::log_softmax_backward, &generic::softmax_backward_covers, "generic"};
    t.silu = {&generic::silu, &generic::silu_covers, "generic"};
    t.silu_mul = {&generic::silu_mul, &generic::silu_mul_covers, "generic"};
    t.gelu = {&generic::gelu, &generic::gelu_covers, "generic"};
    t.add = {&generic::add, &generic::binary_covers, "generic"};
    t.mul = {&generic::mul, &generic::binary_covers, "generic"};
    t.scaled_dot_product_attention = {&generic::scaled_dot_product_attention, &generic::attention_covers, "generic"};
    t.grouped_mm = {&generic::grouped_mm, &generic::grouped_mm_covers, "generic"};
    t.moe_experts = {&generic::moe_experts, &generic::moe_experts_covers, "generic"};
    t.conv2d = {&generic::conv, &generic::conv_covers, "generic"};
    t.upsample_nearest = {&generic::upsample_nearest, &generic::upsample_nearest_covers, "generic"};
    t.conv3d = {&generic::conv, &generic::conv_covers, "generic"};
    return t;
  }();
  return &table;
}

}  // namespace fourfold
