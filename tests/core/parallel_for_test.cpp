// parallel_for: coverage of the range, chunking, exceptions, nesting and thread-count changes.
#include <atomic>
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

}  // namespace
}  // namespace fourfold
