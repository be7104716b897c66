// The first memory workload (DESIGN.md 2.4): a scripted tiled VAE-style decode that pads before every
// convolution, so it calls constant_pad_nd hundreds of times on varying shapes, with the three memory levels
// taken around it.
#pragma once

#include <cstdint>
#include <functional>

#include "check/records.h"

namespace fourfold {

struct MemoryWorkloadOptions {
  uint64_t seed = 0;
  int tiles = 48;          // tiles decoded; each pads 5 times (causal temporal + spatial, as a causal conv3d)
  int64_t channels = 16;
};

// The three memory levels around one workload: empties the allocator's cache, resets the allocator's and
// (where the kernel allows) the process's peaks, samples the anon/file split of the process peak with a
// PeakSampler while `workload` runs, and reads the allocator's statistics after it.
MemoryRecord measure_memory(const std::function<void()>& workload);

// Runs under the current policy. Resets the allocator's and (where the kernel allows) the process's peaks
// first; samples the anon/file split of the process peak with a PeakSampler.
MemoryRecord run_pad_memory_workload(const MemoryWorkloadOptions& options);
int64_t pad_memory_workload_calls(const MemoryWorkloadOptions& options);   // constant_pad_nd calls it makes

}  // namespace fourfold
