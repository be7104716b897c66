// The caching allocator's statistics, cache behaviour, limit and out-of-memory path.
#include <cstring>

#include "support/test_support.h"

namespace fourfold {
namespace {

TEST(CachingAllocator, RoundingBuckets) {
  EXPECT_EQ(CachingAllocator::round_size(0), 64u);
  EXPECT_EQ(CachingAllocator::round_size(1), 64u);
  EXPECT_EQ(CachingAllocator::round_size(65), 128u);
  EXPECT_EQ(CachingAllocator::round_size(64 * 1024), 64u * 1024);
  EXPECT_EQ(CachingAllocator::round_size(64 * 1024 + 1), 80u * 1024);
  EXPECT_EQ(CachingAllocator::round_size(100 * 1024 * 1024), 112u * 1024 * 1024);
  for (size_t n : {1000u, 70000u, 3000000u, 123456789u}) {
    EXPECT_GE(CachingAllocator::round_size(n), n);
    EXPECT_LE(CachingAllocator::round_size(n), n + n / 4 + 64);   // waste bounded by 25%
  }
}

TEST(CachingAllocator, StatisticsCountAllocationsHitsAndPeaks) {
  CachingAllocator a;
  void* p = a.allocate(1000);
  std::memset(p, 1, 1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 1000u);
  EXPECT_EQ(s.reserved_bytes, 1024u);
  EXPECT_EQ(s.cache_misses, 1u);
  a.deallocate(p, 1000);
  s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.allocated_peak_bytes, 1000u);
  EXPECT_EQ(s.reserved_bytes, 1024u);   // cached, still held
  void* q = a.allocate(1010);           // same bucket: a cache hit returning the same block
  EXPECT_EQ(q, p);
  s = a.stats();
  EXPECT_EQ(s.cache_hits, 1u);
  EXPECT_EQ(s.allocations, 2u);
  EXPECT_EQ(s.frees, 1u);
  a.deallocate(q, 1010);
  a.reset_peak();
  EXPECT_EQ(a.stats().allocated_peak_bytes, 0u);
  EXPECT_EQ(a.stats().reserved_peak_bytes, 1024u);
  a.empty_cache();
  s = a.stats();
  EXPECT_EQ(s.reserved_bytes, 0u);
  EXPECT_EQ(s.system_frees, 1u);
}

TEST(CachingAllocator, ReservedLimitEmptiesTheCacheThenThrowsOutOfMemory) {
  CachingAllocator a;
  a.set_reserved_limit(1 << 20);
  void* p = a.allocate(600 * 1024);
  a.deallocate(p, 600 * 1024);               // cached: 640 KiB reserved
  void* q = a.allocate(700 * 1024);          // needs the cache released to fit under 1 MiB
  EXPECT_EQ(a.stats().system_frees, 1u);
  EXPECT_TRUE(testing::throws_with<OutOfMemoryError>([&] { a.allocate(512 * 1024); },
                                                     {"CachingAllocator(cpu)", "524288 bytes", "reserved limit",
                                                      "allocated 716800 B"}));
  a.deallocate(q, 700 * 1024);
}

TEST(CachingAllocator, ImpossibleRequestThrowsNeverReturnsNull) {
  CachingAllocator a;
  EXPECT_TRUE(testing::throws_with<OutOfMemoryError>([&] { a.allocate(size_t{1} << 62); },
                                                     {"cannot allocate", "the system refused"}));
  EXPECT_EQ(a.stats().allocations, 0u);
}

TEST(CachingAllocator, TensorsAllocateThroughTheProcessAllocator) {
  CachingAllocator& a = cpu_allocator();
  const AllocatorStats before = a.stats();
  {
    Tensor t = Tensor::empty({1024, 256}, DType::f32);
    EXPECT_EQ(a.stats().allocated_bytes, before.allocated_bytes + 1024u * 256 * 4);
  }
  EXPECT_EQ(a.stats().allocated_bytes, before.allocated_bytes);
  EXPECT_GT(a.stats().frees, before.frees);
}

// Blocks of 2 MiB and more come 2 MiB aligned and advised as huge pages; the advice must not change what the
// caller gets: every byte writable, the statistics as for any block, the block reused from the cache.
TEST(CachingAllocator, HugePageBlocksAreAlignedAndBehaveAsAnyOther) {
  constexpr size_t kTwoMiB = size_t{2} << 20;
  CachingAllocator a;
  for (size_t bytes : {kTwoMiB, kTwoMiB + 1, 5 * kTwoMiB + 12345}) {
    void* p = a.allocate(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kTwoMiB, 0u) << bytes;
    std::memset(p, 0x5a, bytes);
    EXPECT_EQ(static_cast<unsigned char*>(p)[bytes - 1], 0x5a);
    EXPECT_EQ(a.stats().reserved_bytes % 64, 0u);
    a.deallocate(p, bytes);
    EXPECT_EQ(a.allocate(bytes), p);   // from the cache
    a.deallocate(p, bytes);
  }
  void* small = a.allocate(kTwoMiB / 2 + 100);   // rounds below the threshold: ordinary 64-byte alignment still holds
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  a.deallocate(small, kTwoMiB / 2 + 100);
  a.empty_cache();
  EXPECT_EQ(a.stats().reserved_bytes, 0u);
}

}  // namespace
}  // namespace fourfold
