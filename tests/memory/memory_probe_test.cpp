// The process probe sees memory the allocator never sees, and the peak reset works where the kernel allows it.
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "fourfold/memory_probe.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

constexpr size_t kBytes = 256u << 20;

TEST(MemoryProbe, ReadsTheResidentSetSplitByKind) {
  const ProcessMemory m = read_process_memory();
  EXPECT_GT(m.rss_bytes, 0u);
  EXPECT_GE(m.rss_peak_bytes, m.rss_bytes);
  EXPECT_GT(m.rss_file_bytes, 0u);   // the binary itself is file-backed
  EXPECT_LE(m.rss_anon_bytes + m.rss_file_bytes + m.rss_shmem_bytes, m.rss_bytes + (1u << 20));
}

TEST(MemoryProbe, PlainMallocShowsUpInTheProcessNotTheAllocator) {
  const bool reset = reset_process_peak();
  const ProcessMemory before = read_process_memory();
  const AllocatorStats alloc_before = cpu_allocator().stats();
  auto* p = static_cast<char*>(std::malloc(kBytes));
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, kBytes);   // touch every page
  asm volatile("" : : "r"(p) : "memory");   // keep the compiler from dropping malloc + memset + free
  const ProcessMemory during = read_process_memory();
  EXPECT_GE(during.rss_anon_bytes, before.rss_anon_bytes + kBytes * 9 / 10);
  if (reset) EXPECT_GE(during.rss_peak_bytes, before.rss_bytes + kBytes * 9 / 10);
  EXPECT_EQ(cpu_allocator().stats().reserved_bytes, alloc_before.reserved_bytes);
  std::free(p);
}

TEST(MemoryProbe, AllocatorMemoryIsSeenByBoth) {
  reset_process_peak();
  const AllocatorStats alloc_before = cpu_allocator().stats();
  {
    Tensor t = Tensor::zeros({static_cast<int64_t>(kBytes / 4)}, DType::f32);   // zeros touches the pages
    const AllocatorStats s = cpu_allocator().stats();
    EXPECT_GE(s.reserved_bytes, alloc_before.reserved_bytes + kBytes);
    EXPECT_GE(s.allocated_bytes, alloc_before.allocated_bytes + kBytes);
  }
  cpu_allocator().empty_cache();
}

TEST(MemoryProbe, ResetBringsThePeakDownWhereSupported) {
  {
    std::vector<char> big(kBytes, 1);
    volatile char sink = big[kBytes / 2];
    (void)sink;
  }
  const ProcessMemory high = read_process_memory();
  if (!reset_process_peak()) GTEST_SKIP() << "this kernel refuses /proc/self/clear_refs: peak is since start";
  const ProcessMemory low = read_process_memory();
  EXPECT_LT(low.rss_peak_bytes, high.rss_peak_bytes);
}

TEST(MemoryProbe, PeakSamplerKeepsTheLargestAnonymousSet) {
  PeakSampler sampler(1);
  const ProcessMemory start = read_process_memory();
  {
    std::vector<char> big(kBytes, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(sampler.peak().rss_anon_bytes, start.rss_anon_bytes + kBytes * 9 / 10);
}

TEST(MemoryProbe, DeviceProbeInterface) {
  auto cpu = make_device_memory_probe(kCpu);
  EXPECT_FALSE(cpu->read().available);
  EXPECT_TRUE(testing::throws_with<DeviceError>(
      [] { make_device_memory_probe(Device{DeviceType::cuda, 0}); }, {"make_device_memory_probe", "cuda:0"}));
}

}  // namespace
}  // namespace fourfold
