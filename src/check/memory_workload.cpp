#include "check/memory_workload.h"

#include <malloc.h>

#include <algorithm>

#include "fourfold/allocator.h"
#include "fourfold/memory_probe.h"
#include "fourfold/ops.h"

namespace fourfold {
namespace {

constexpr int kPadsPerTile = 5;

// Tile t of a decode: the sizes cycle through what a tiled VAE decode sees at its resolution levels, so that
// the allocator meets many different shapes, as it does in a real decode.
Shape tile_shape(int t, int64_t channels) {
  static const int64_t kSides[] = {16, 24, 32, 20, 40, 28};
  static const int64_t kFrames[] = {1, 3, 5, 2};
  const int64_t h = kSides[t % 6], w = kSides[(t + 2) % 6];
  return {1, channels, kFrames[t % 4], h, w};
}

}  // namespace

int64_t pad_memory_workload_calls(const MemoryWorkloadOptions& options) {
  return static_cast<int64_t>(options.tiles) * kPadsPerTile;
}

MemoryRecord measure_memory(const std::function<void()>& workload) {
  CachingAllocator& allocator = cpu_allocator();
  allocator.empty_cache();
  // Blocks below glibc's mmap threshold go back to its heap, resident still: an earlier stage's freed memory would
  // count as present before the workload and then be reused unseen, and the process level could not move.
  malloc_trim(0);
  MemoryRecord record;
  record.peak_reset_supported = reset_process_peak();
  allocator.reset_peak();
  const AllocatorStats before = allocator.stats();
  record.reserved_before_bytes = before.reserved_bytes;
  record.present_before_bytes = read_process_memory().rss_bytes;
  {
    PeakSampler sampler(2);
    workload();
    const ProcessMemory peak = sampler.peak();
    // Without a reset the high-water mark is the whole process's; the sampled maximum is this workload's.
    record.process_peak_bytes =
        record.peak_reset_supported ? std::max(peak.rss_peak_bytes, peak.rss_bytes) : peak.rss_bytes;
    record.process_peak_anon_bytes = peak.rss_anon_bytes;
    record.process_peak_file_bytes = peak.rss_file_bytes;
  }
  const AllocatorStats stats = allocator.stats();
  record.allocated_current_bytes = stats.allocated_bytes;
  record.allocated_peak_bytes = stats.allocated_peak_bytes;
  record.reserved_current_bytes = stats.reserved_bytes;
  record.reserved_peak_bytes = stats.reserved_peak_bytes;
  record.reserved_untouched_bytes = static_cast<int64_t>(stats.reserved_untouched_at_peak_bytes) -
                                    static_cast<int64_t>(before.reserved_bytes - before.reserved_used_bytes);
  return record;
}

MemoryRecord run_pad_memory_workload(const MemoryWorkloadOptions& options) {
  return measure_memory([&] {
    for (int t = 0; t < options.tiles; ++t) {
      Tensor x = Tensor::empty(tile_shape(t, options.channels), DType::bf16);
      x.fill_uniform(options.seed + static_cast<uint64_t>(t), -1.0, 1.0);
      // A causal conv3d with a 3x3x3 kernel pads (1, 1) in W and H and (2, 0) in T; the decoder's blocks run a
      // few of them per tile at the same size (the crop stands in for the convolution that follows), and an
      // upsampling block doubles the spatial size before the next pad.
      for (int k = 0; k < kPadsPerTile - 1; ++k)
        x = constant_pad_nd(x, {1, 1, 1, 1, 2, 0}).narrow(2, 2, x.size(2)).narrow(3, 1, x.size(3)).narrow(4, 1, x.size(4));
      Tensor up = upsample_nearest(x, {x.size(2), x.size(3) * 2, x.size(4) * 2});
      Tensor padded = constant_pad_nd(up, {1, 1, 1, 1, 2, 0});
      (void)padded;
    }
  });
}

}  // namespace fourfold
