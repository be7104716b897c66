#include "check/op_timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include <sys/resource.h>

#include "check/statistics.h"
#include "fourfold/errors.h"

namespace fourfold {
namespace {

using Clock = std::chrono::steady_clock;

struct Faults {
  long minor = 0, major = 0;
};

Faults read_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return {usage.ru_minflt, usage.ru_majflt};
}

}  // namespace

OpTiming time_op(const std::function<void()>& call, const TimerOptions& options) {
  if (options.samples < 1) fail<ValueError>("time_op", "samples", "at least 1", std::to_string(options.samples));
  if (options.warmup < 0) fail<ValueError>("time_op", "warmup", "at least 0", std::to_string(options.warmup));
  if (options.max_calls_per_sample < 1)
    fail<ValueError>("time_op", "max_calls_per_sample", "at least 1", std::to_string(options.max_calls_per_sample));
  OpTiming t;
  t.warmup = options.warmup;
  t.samples = options.samples;

  double fastest = 0.0;
  for (int i = 0; i < options.warmup; ++i) {
    const auto start = Clock::now();
    call();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    fastest = i == 0 ? s : std::min(fastest, s);
    t.warmup_us = std::max(t.warmup_us, s * 1e6);
  }
  if (options.warmup > 0) {
    const double calls = std::ceil(options.min_sample_seconds / std::max(fastest, 1e-9));
    t.calls_per_sample =
        static_cast<int64_t>(std::clamp(calls, 1.0, static_cast<double>(options.max_calls_per_sample)));
  }

  const Faults before = read_faults();
  for (int s = 0; s < options.samples; ++s) {
    const auto start = Clock::now();
    for (int64_t c = 0; c < t.calls_per_sample; ++c) call();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    t.sample_us.push_back(seconds * 1e6 / static_cast<double>(t.calls_per_sample));
  }
  const Faults after = read_faults();
  const double calls = static_cast<double>(options.samples) * static_cast<double>(t.calls_per_sample);
  t.minor_faults_per_call = static_cast<double>(after.minor - before.minor) / calls;
  t.major_faults_per_call = static_cast<double>(after.major - before.major) / calls;

  const Summary summary = summarize(t.sample_us);
  t.median_us = summary.median;
  t.p10_us = summary.p10;
  t.p90_us = summary.p90;
  t.min_us = summary.min;
  t.max_us = summary.max;
  return t;
}

}  // namespace fourfold
