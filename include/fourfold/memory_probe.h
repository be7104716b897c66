// What the system says the process holds, beside what the allocator says it holds (DESIGN.md section 2.4).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "fourfold/device.h"

namespace fourfold {

// From /proc/self/status. Resident pages split as the kernel accounts them: anonymous (heap, allocator
// blocks), file-backed (memory-mapped weights, the binary) and shared memory.
struct ProcessMemory {
  uint64_t rss_bytes = 0;
  uint64_t rss_anon_bytes = 0;
  uint64_t rss_file_bytes = 0;
  uint64_t rss_shmem_bytes = 0;
  uint64_t rss_peak_bytes = 0;     // VmHWM: high-water mark since start or since the last reset
};

ProcessMemory read_process_memory();

// Resets the high-water mark to the current resident set by writing "5" to /proc/self/clear_refs
// (Linux >= 4.0). Returns false where the kernel refuses (old kernel, a sandbox without that file): then
// the peak is the peak since process start, and records must say so (peak_reset_supported = false).
bool reset_process_peak();

// The kernel keeps no peak per page kind, so the split of the peak is sampled: a PeakSampler reads
// /proc/self/status every `interval_ms` on a background thread and keeps the largest anon and file values
// seen, which bounds how far the split can be off (one interval of growth).
class PeakSampler {
 public:
  explicit PeakSampler(int interval_ms = 5);
  ~PeakSampler();
  PeakSampler(const PeakSampler&) = delete;
  PeakSampler& operator=(const PeakSampler&) = delete;
  ProcessMemory peak() const;      // rss_peak_bytes from VmHWM; anon/file/shmem: the sampled maxima
 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Device memory as the driver reports it. A GPU backend implements this (cudaMemGetInfo sampled at
// synchronisation points); on the CPU there is no such level and read() says so.
struct DeviceMemory {
  bool available = false;          // false: this device has no driver-level reading
  uint64_t used_bytes = 0;
  uint64_t total_bytes = 0;
  uint64_t peak_used_bytes = 0;
};

class DeviceMemoryProbe {
 public:
  virtual ~DeviceMemoryProbe() = default;
  virtual Device device() const = 0;
  virtual DeviceMemory read() = 0;
  virtual void reset_peak() = 0;
};

// CPU: a probe whose read() has available = false. CUDA: DeviceError until the CUDA backend exists.
std::unique_ptr<DeviceMemoryProbe> make_device_memory_probe(Device device);

}  // namespace fourfold
