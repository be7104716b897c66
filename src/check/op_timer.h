// Times one op call the way the op-time record defines it (DESIGN.md section 2.2): W warm-up calls, then R
// samples, each a batch of calls long enough for the clock; µs per call as median, p10 and p90; and the
// page faults per call, which expose an op that maps fresh memory on every call (MACHINE.md).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace fourfold {

struct TimerOptions {
  int warmup = 3;                  // W: untimed calls before the samples (they also size the batch)
  int samples = 10;                // R
  // A sample lasts at least this long: calls are batched until it does. steady_clock reads cost ~20-40 ns
  // and resolve 1 ns here, so 1 ms keeps the clock's share of a sample below 1e-4.
  double min_sample_seconds = 1e-3;
  int64_t max_calls_per_sample = 1 << 20;
};

struct OpTiming {
  int warmup = 0;
  int samples = 0;
  int64_t calls_per_sample = 1;
  std::vector<double> sample_us;   // µs per call of each sample, in the order they ran
  double median_us = 0.0, p10_us = 0.0, p90_us = 0.0, min_us = 0.0, max_us = 0.0;
  double warmup_us = 0.0;          // µs of the slowest warm-up call (the first call pays for cold caches)
  // getrusage(RUSAGE_SELF) deltas over the timed calls only, divided by their number. All threads of the
  // process count, which is what a parallel op needs.
  double minor_faults_per_call = 0.0;
  double major_faults_per_call = 0.0;
};

// Batch size: ceil(min_sample_seconds / t), t = the fastest warm-up call, clamped to
// [1, max_calls_per_sample]. With W = 0 there is nothing to size from and every sample is one call.
// ValueError for samples < 1 or warmup < 0. Exceptions from `call` propagate.
OpTiming time_op(const std::function<void()>& call, const TimerOptions& options = {});

}  // namespace fourfold
