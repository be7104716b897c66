// The generic tier's kernel table: the ops composed from primitives so far; a null entry falls through to the
// reference tier.
#include "backends/generic/generic.h"
#include "backends/kernel_table.h"

namespace fourfold {

const KernelTable* generic_kernels() {
  static const KernelTable table = [] {
    KernelTable t;
    t.linear = {&generic::linear, &generic::linear_covers, "generic"};
    t.scaled_mm = {&generic::scaled_mm, &generic::scaled_mm_covers, "generic"};
    t.softmax = {&generic::softmax, &generic::softmax_covers, "generic"};
    t.log_softmax = {&generic::log_softmax, &generic::softmax_covers, "generic"};
    t.constant_pad_nd = {&generic::constant_pad_nd, &generic::constant_pad_nd_covers, "generic"};
    t.rms_norm = {&generic::rms_norm, &generic::rms_norm_covers, "generic"};
    t.silu = {&generic::silu, &generic::silu_covers, "generic"};
    t.gelu = {&generic::gelu, &generic::gelu_covers, "generic"};
    t.add = {&generic::add, &generic::binary_covers, "generic"};
    t.mul = {&generic::mul, &generic::binary_covers, "generic"};
    return t;
  }();
  return &table;
}

}  // namespace fourfold
