// A read-bandwidth probe taken between the steps of a workload (run's decode steps), so that each step is judged
// against the memory system of its own moment. On a shared VM a one-thread read probe moves by a factor of two
// or three within seconds (the host's other tenants; docs/decode.md step 22), so a probe taken once before or
// after a decode says
// little about the decode's own seconds; a sample right before each step, and the median over the steps of
// "floor at that sample / step time", does.
#pragma once

#include <cstddef>
#include <vector>

namespace fourfold {

class StepReadProbe {
 public:
  // A buffer of `bytes` (at least 4 x the last-level cache: 128 MiB by default), mapped outside the caching
  // allocator so that the workload's allocator figures stay its own, advised onto 2 MiB pages as the decode's
  // weights are, and written once here (no sample pays first-touch faults).
  explicit StepReadProbe(size_t bytes = size_t{128} << 20);
  ~StepReadProbe();
  StepReadProbe(const StepReadProbe&) = delete;
  StepReadProbe& operator=(const StepReadProbe&) = delete;

  // One read of the whole buffer on num_threads() threads (the roofline probe's kernel): GB/s, also kept.
  double sample();
  const std::vector<double>& samples() const { return samples_; }
  size_t bytes() const { return bytes_; }

 private:
  void* mapping_ = nullptr;
  size_t mapped_ = 0;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  std::vector<double> samples_;
};

}  // namespace fourfold
