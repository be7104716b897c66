// The op timer: batching up to the minimum sample length, time per call never below what a call must take,
// page faults per call, argument checks. Nothing here asserts a speed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "check/op_timer.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

// A fixed amount of dependent integer work, no sleeping: its time per call is stable.
std::atomic<uint64_t> g_sink{0};
void busy(int iterations) {
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < iterations; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  g_sink.fetch_add(x, std::memory_order_relaxed);
}

TEST(OpTimer, CountsWarmupsAndBatchesShortCalls) {
  int calls = 0;
  TimerOptions options;
  options.warmup = 2;
  options.samples = 5;
  options.min_sample_seconds = 2e-4;
  const OpTiming t = time_op([&] { ++calls; busy(200); }, options);
  EXPECT_EQ(t.samples, 5);
  EXPECT_EQ(t.sample_us.size(), 5u);
  EXPECT_GT(t.calls_per_sample, 1);   // a ~0.2 µs call needs many per 200 µs sample
  EXPECT_EQ(calls, 2 + 5 * t.calls_per_sample);
  EXPECT_LE(t.p10_us, t.median_us);
  EXPECT_LE(t.median_us, t.p90_us);
  EXPECT_LE(t.min_us, t.p10_us);
  EXPECT_LE(t.p90_us, t.max_us);
  // Each sample lasted about the minimum (the batch was sized from the fastest warm-up).
  EXPECT_GT(t.median_us * static_cast<double>(t.calls_per_sample), 0.3 * 200.0);
}

// Every call sleeps at least 1 ms, so whatever the machine's load, a sample's time per call is at least that: a
// timer that divided a sample by more calls than it made (per batch taken as per call, or the reverse) reads below
// it. Only a lower bound is asserted: a busy machine only ever adds time.
TEST(OpTimer, TimePerCallIsTheSampleOverItsCalls) {
  TimerOptions options;
  options.warmup = 1;
  options.samples = 3;
  options.min_sample_seconds = 2.5e-3;
  int calls = 0;
  const OpTiming t = time_op([&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }, options);
  EXPECT_EQ(calls, 1 + 3 * t.calls_per_sample);
  EXPECT_GE(t.calls_per_sample, 1);
  for (double us : t.sample_us) EXPECT_GE(us, 1000.0);
  EXPECT_GE(t.warmup_us, 1000.0);
}

TEST(OpTimer, NoWarmupMeansOneCallPerSample) {
  int calls = 0;
  TimerOptions options;
  options.warmup = 0;
  options.samples = 3;
  const OpTiming t = time_op([&] { ++calls; }, options);
  EXPECT_EQ(t.calls_per_sample, 1);
  EXPECT_EQ(calls, 3);
}

TEST(OpTimer, CapsTheBatch) {
  TimerOptions options;
  options.warmup = 1;
  options.samples = 2;
  options.min_sample_seconds = 10.0;
  options.max_calls_per_sample = 16;
  EXPECT_EQ(time_op([] {}, options).calls_per_sample, 16);
}

TEST(OpTimer, CountsPageFaultsOfFreshMemory) {
  // Each call maps and touches 64 fresh pages (mmap-backed: far above malloc's mmap threshold once
  // raised by nothing else); released again, so the next call faults again.
  TimerOptions options;
  options.warmup = 1;
  options.samples = 3;
  options.min_sample_seconds = 0;
  const size_t bytes = 64 * 4096 + (size_t{64} << 20);   // 64 MiB + 64 pages: malloc maps it fresh
  const OpTiming t = time_op([&] {
    char* p = static_cast<char*>(std::malloc(bytes));
    for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    g_sink.fetch_add(static_cast<uint64_t>(p[4096]), std::memory_order_relaxed);
    std::free(p);
  }, options);
  EXPECT_GT(t.minor_faults_per_call, 1000.0);   // 16448 pages, fewer with transparent huge pages
  // Many calls per sample, so that the few faults the process takes anyway (the sanitizers' allocator, the
  // timer's own first touches) are spread over thousands of calls instead of three.
  TimerOptions quiet_options = options;
  quiet_options.min_sample_seconds = 0.01;
  const OpTiming quiet = time_op([] { busy(1000); }, quiet_options);
  EXPECT_GT(quiet.calls_per_sample, 10);
  EXPECT_LT(quiet.minor_faults_per_call, 1.0);
}

TEST(OpTimer, BadOptionsAndThrowingCalls) {
  using testing::throws_with;
  TimerOptions none;
  none.samples = 0;
  EXPECT_TRUE(throws_with<ValueError>([&] { time_op([] {}, none); }, {"time_op", "'samples'", "at least 1"}));
  TimerOptions negative;
  negative.warmup = -1;
  EXPECT_TRUE(throws_with<ValueError>([&] { time_op([] {}, negative); }, {"time_op", "'warmup'"}));
  EXPECT_TRUE(throws_with<ShapeError>([] { time_op([] { throw ShapeError("op: boom"); }); }, {"boom"}));
}

}  // namespace
}  // namespace fourfold
