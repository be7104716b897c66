// channel_rms_norm over a run of positions of a channel-first tensor, compiled once per ISA. The positions are
// the lanes: a block of kVectors vectors of positions sums its squares channel by channel (in double lanes, as
// rms_norm's rows), reading kVectors lines of each channel's row and asking for the next block's; a second
// pass over the same lines (in L2: C x 256 bytes) writes x * inv_rms * weight[c], silu fused. Replaces the
// channels-last copy, the norm's rows and the copy back (and silu's pass) that the composition makes.
#include <algorithm>

#include "backends/cpu/kernels/channel_rms_norm.h"
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

constexpr int kVectors = 4;

template <RowType T>
constexpr int64_t element_bytes() {
  return T == RowType::f32 ? 4 : 2;
}

// V vectors of positions from position i, the last one holding `tail` (<= kLanes) of them.
template <RowType T, int V>
void block(const ChannelNormRun& r, int64_t channels, int64_t i, int64_t tail, double eps, bool silu) {
  const auto load_at = [&](const void* p, int64_t ch, int v) {
    const int64_t at = ch * r.stride + i + v * kLanes;
    return v == V - 1 && tail < kLanes ? load_tail<T>(p, at, tail, 0.0f) : load<T>(p, at);
  };
  vd acc[V] = {};
  for (int64_t ch = 0; ch < channels; ++ch) {
    const char* row = static_cast<const char*>(r.x) + (ch * r.stride + i) * element_bytes<T>();
    // The next block of this channel's row: C rows are more streams than the hardware prefetchers follow.
    for (int v = 0; v < V; ++v) __builtin_prefetch(row + (V + v) * kLanes * element_bytes<T>(), 0, 3);
    for (int v = 0; v < V; ++v) {
      const vf x = load_at(r.x, ch, v);
      acc[v] += __builtin_convertvector(x * x, vd);
    }
  }
  vf inv[V];
  for (int v = 0; v < V; ++v)
    for (int j = 0; j < kLanes; ++j) inv[v][j] = static_cast<float>(1.0 / std::sqrt(acc[v][j] / static_cast<double>(channels) + eps));
  for (int64_t ch = 0; ch < channels; ++ch) {
    const vf w = splat(r.weight != nullptr ? load1<T>(r.weight, ch) : 1.0f);
    for (int v = 0; v < V; ++v) {
      vf y = load_at(r.x, ch, v) * inv[v] * w;
      if (silu) y = vsilu(rounded<T>(y));
      const int64_t at = ch * r.stride + i + v * kLanes;
      if (v == V - 1 && tail < kLanes) store_tail<T>(r.out, at, tail, y);
      else store<T>(r.out, at, y);
    }
  }
}

template <RowType T>
void run(const ChannelNormRun& r, int64_t channels, int64_t positions, double eps, bool silu) {
  int64_t i = 0;
  for (; i + kVectors * kLanes <= positions; i += kVectors * kLanes) block<T, kVectors>(r, channels, i, kLanes, eps, silu);
  for (; i < positions; i += kLanes) block<T, 1>(r, channels, i, std::min<int64_t>(kLanes, positions - i), eps, silu);
}

}  // namespace

void channel_rms_norm_run(const ChannelNormRun& r, RowType type, int64_t channels, int64_t positions, double eps,
                          bool silu) {
  with_type(type, [&]<RowType T>() { run<T>(r, channels, positions, eps, silu); });
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
