// Dedicated channel_rms_norm: x [N, C, S] cut into runs of positions (each a work item over all C channels),
// the runs in parallel, each through kernels/channel_rms_norm.cpp.
#include <algorithm>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernel_types.h"
#include "backends/cpu/kernels/channel_rms_norm.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

using ChannelNormFn = void (*)(const ChannelNormRun&, RowType, int64_t, int64_t, double, bool);

bool float_type(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

// Positions per work item: a multiple of every level's 4 x 16 lanes, long enough for each channel's row to be
// read in whole lines, short enough for two items per thread on a small frame.
constexpr int64_t kRunPositions = 512;

bool channel_rms_norm_covers(const ChannelNormArgs& a) {
  const DType t = a.x.dtype();
  const bool weight_ok = a.weight == nullptr || (a.weight->dtype() == t && a.weight->is_contiguous());
  return float_type(t) && a.x.is_contiguous() && a.out.is_contiguous() && weight_ok;
}

void channel_rms_norm(const ChannelNormArgs& a, ChannelNormFn run) {
  const int64_t n = a.x.size(0), c = a.x.size(1), positions = a.x.size(2);
  if (n == 0 || c == 0 || positions == 0) return;
  const RowType type = row_type(a.x.dtype(), "channel_rms_norm", "x");
  const int64_t es = static_cast<int64_t>(dtype_size(a.x.dtype()));
  const int64_t runs = (positions + kRunPositions - 1) / kRunPositions;
  const auto* x = static_cast<const uint8_t*>(a.x.data());
  auto* out = static_cast<uint8_t*>(a.out.data());
  parallel_for(0, n * runs, 1, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / runs, p0 = item % runs * kRunPositions;
      const int64_t offset = (b * c * positions + p0) * es;
      run({x + offset, a.weight == nullptr ? nullptr : a.weight->data(), out + offset, positions}, type, c,
          std::min(kRunPositions, positions - p0), a.eps, a.silu);
    }
  });
}

}  // namespace

#define ENTRIES(isa)                                                                                        \
  t.channel_rms_norm = {[](const ChannelNormArgs& a) { channel_rms_norm(a, &isa::channel_rms_norm_run); }, \
                        &channel_rms_norm_covers};
FOURFOLD_CPU_KERNELS(channel_rms_norm, ENTRIES)

}  // namespace fourfold::cpu
