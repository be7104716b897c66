// parallel_for: coverage of the range, chunking, exceptions, nesting and thread-count changes.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "fourfold/parallel.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

TEST(ParallelFor, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (int64_t n : {0, 1, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallel_for(0, n, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
  }
  set_num_threads(2);
}

TEST(ParallelFor, GrainLimitsTheChunkCount) {
  set_num_threads(2);
  std::atomic<int> calls{0};
  parallel_for(10, 20, 100, [&](int64_t b, int64_t e) {
    EXPECT_EQ(b, 10);
    EXPECT_EQ(e, 20);
    calls++;
  });
  EXPECT_EQ(calls.load(), 1);
}

TEST(ParallelFor, ExceptionsReachTheCaller) {
  set_num_threads(2);
  EXPECT_THROW(parallel_for(0, 100, 1, [](int64_t b, int64_t) {
                 if (b > 0) throw ValueError("from a worker");
               }),
               ValueError);
  // The pool still works afterwards.
  std::atomic<int64_t> sum{0};
  parallel_for(0, 100, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 100);
}

TEST(ParallelFor, NestedCallsRunSerially) {
  set_num_threads(2);
  std::atomic<int> inner{0};
  parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    parallel_for(0, 10, 1, [&](int64_t b, int64_t e) { inner += static_cast<int>(e - b); });
  });
  EXPECT_EQ(inner.load(), 20);
}

TEST(ParallelFor, ThreadCountValidation) {
  EXPECT_TRUE(testing::throws_with<ValueError>([] { set_num_threads(0); }, {"set_num_threads", "n >= 1"}));
  set_num_threads(3);
  EXPECT_EQ(num_threads(), 3);
  set_num_threads(2);
}

// A host with three threads of its own, each chunk on a thread of its own, and the chunks it was handed.
std::vector<std::pair<int64_t, int64_t>> g_host_ranges;
int three() { return 3; }
void run_on_own_threads(int chunks, const std::function<void(int)>& chunk) {
  std::vector<std::thread> threads;
  std::exception_ptr error;
  std::mutex m;
  for (int c = 0; c < chunks; ++c)
    threads.emplace_back([&, c] {
      try {
        chunk(c);
      } catch (...) {
        std::lock_guard lock(m);
        error = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

TEST(ParallelFor, HostThreadsRunThePoolsChunks) {
  set_num_threads(2);
  std::vector<std::pair<int64_t, int64_t>> pool_ranges;
  std::mutex m;
  const auto record = [&](std::vector<std::pair<int64_t, int64_t>>& into) {
    return [&](int64_t b, int64_t e) {
      std::lock_guard lock(m);
      into.emplace_back(b, e);
      std::atomic<int> inner{0};   // nested: serial on the same thread
      parallel_for(0, 8, 1, [&](int64_t ib, int64_t ie) { inner += static_cast<int>(ie - ib); });
      EXPECT_EQ(inner.load(), 8);
    };
  };
  set_num_threads(3);
  parallel_for(5, 105, 1, record(pool_ranges));
  static const HostThreads host{&three, &run_on_own_threads};
  use_host_threads(&host);
  set_num_threads(1);   // the pool's count no longer matters
  EXPECT_EQ(num_threads(), 3);
  parallel_for(5, 105, 1, record(g_host_ranges));
  EXPECT_THROW(parallel_for(0, 9, 1, [](int64_t b, int64_t) {
                 if (b > 0) throw ValueError("from a host thread");
               }),
               ValueError);
  use_host_threads(nullptr);
  EXPECT_EQ(num_threads(), 1);
  std::sort(pool_ranges.begin(), pool_ranges.end());
  std::sort(g_host_ranges.begin(), g_host_ranges.end());
  EXPECT_EQ(g_host_ranges, pool_ranges);
  EXPECT_EQ(pool_ranges.size(), 3u);
  set_num_threads(2);
}

}  // namespace
}  // namespace fourfold
