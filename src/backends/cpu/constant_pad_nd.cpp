// Dedicated constant_pad_nd: dims coalesced into a row plan, rows written in parallel by the ISA's pad_rows.
#include <algorithm>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernels/constant_pad_nd.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

using PadRowsFn = void (*)(const PadPlan&, int64_t, int64_t);

struct Dim {
  int64_t out_size, in_size, before, in_stride;
  bool unpadded() const { return before == 0 && out_size == in_size; }
};

// out [*, padded dims]: any input layout and dtype; elements are moved as bytes, so every dtype of one size
// shares a kernel. Unpadded dims whose input strides nest are merged (leading dims of a contiguous input
// collapse into one), and the innermost remaining dim is the row: memcpy when its stride is 1, else a gather, or
// tiles of rows when another dim has stride 1.
void constant_pad_nd(const PadArgs& a, PadRowsFn pad_rows) {
  const int64_t out_numel = a.out.numel();
  if (out_numel == 0) return;
  const int rank = a.x.dim();
  Dim dims[kPadMaxRank];
  int count = 0;
  const int padded = static_cast<int>(a.pads.size() / 2);
  // Walk from the innermost dim outwards, merging dim d into the running (inner) one when both are unpadded
  // and d's stride is the inner extent; unpadded size-1 dims carry no index and are dropped.
  Dim cur{1, 1, 0, 1};
  bool have = false;
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t before = rank - 1 - d < padded ? a.pads[2 * (rank - 1 - d)] : 0;
    const Dim dim{a.out.size(d), a.x.size(d), before, a.x.stride(d)};
    if (dim.unpadded() && dim.out_size == 1) continue;
    if (!have) {
      cur = dim;
      have = true;
    } else if (dim.unpadded() && cur.unpadded() && dim.in_stride == cur.in_stride * cur.in_size) {
      cur.out_size *= dim.out_size;
      cur.in_size *= dim.in_size;
    } else {
      dims[count++] = cur;
      cur = dim;
    }
  }
  dims[count++] = cur;   // rank 0, or every dim dropped: one row of one element
  std::reverse(dims, dims + count);

  PadPlan plan{};
  plan.rank = count;
  plan.elem_size = static_cast<int>(dtype_size(a.x.dtype()));
  for (int d = 0; d < count; ++d) {
    plan.out_size[d] = dims[d].out_size;
    plan.in_size[d] = dims[d].in_size;
    plan.before[d] = dims[d].before;
    plan.in_stride[d] = dims[d].in_stride;
  }
  plan.in = static_cast<const uint8_t*>(a.x.numel() > 0 ? a.x.data() : nullptr);
  plan.out = static_cast<uint8_t*>(a.out.data());
  store_from_double(a.out.dtype(), &plan.fill, a.value);

  const int inner = count - 1;
  const int64_t width = plan.out_size[inner];
  const int64_t rows = out_numel / width;
  // A row read with a stride while an outer dim is stride 1 (channels-last): tiles along that dim instead of
  // rows, so that input lines are not fetched once per element.
  plan.tile_dim = -1;
  if (plan.in_stride[inner] > 1)
    for (int d = 0; d < inner; ++d)
      if (plan.in_stride[d] == 1 && plan.out_size[d] > 1) plan.tile_dim = d;
  int64_t items = rows, item_rows = 1;
  if (plan.tile_dim >= 0) {
    item_rows = kPadTileBytes / plan.elem_size;
    const int64_t t = plan.out_size[plan.tile_dim];
    items = rows / t * ((t + item_rows - 1) / item_rows);
  }
  // About 64 KiB of output per task: enough to hide the fork/join, fine enough to balance.
  const int64_t grain = std::max<int64_t>(1, (int64_t{64} << 10) / (item_rows * width * plan.elem_size));
  parallel_for(0, items, grain, [&](int64_t begin, int64_t end) { pad_rows(plan, begin, end); });
}

}  // namespace

// The backward is the forward with the pads negated (a crop).
#define ENTRIES(isa)                                                                          \
  t.constant_pad_nd = {[](const PadArgs& a) { constant_pad_nd(a, &isa::pad_rows); }};         \
  t.constant_pad_nd_backward = {[](const PadArgs& a) { constant_pad_nd(a, &isa::pad_rows); }};
FOURFOLD_CPU_KERNELS(constant_pad_nd, ENTRIES)

}  // namespace fourfold::cpu
