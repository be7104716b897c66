// The memory record sees what the allocator cannot: plain malloc shows up "outside the allocator", memory
// taken through the allocator does not; and the scripted pad workload fills every level.
#include <cstdlib>
#include <cstring>

#include "check/memory_workload.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

constexpr int64_t kBytes = int64_t{256} << 20;
constexpr int64_t kSlack = int64_t{32} << 20;

TEST(MemoryRecord, PlainMallocIsOutsideTheAllocator) {
  const MemoryRecord m = measure_memory([] {
    auto* p = static_cast<char*>(std::malloc(kBytes));
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, kBytes);   // touch every page
    asm volatile("" : : "r"(p) : "memory");   // keep the compiler from dropping malloc + memset + free
    std::free(p);
  });
  if (!m.peak_reset_supported) GTEST_SKIP() << "process peak cannot be reset here";
  EXPECT_GE(outside_allocator_bytes(m), kBytes - kSlack);
  EXPECT_LT(m.reserved_peak_bytes, static_cast<uint64_t>(kSlack));
  EXPECT_GE(m.process_peak_anon_bytes + kSlack, static_cast<uint64_t>(kBytes));
}

TEST(MemoryRecord, AllocatorMemoryIsNotOutside) {
  const MemoryRecord m = measure_memory([] {
    Tensor t = Tensor::zeros({kBytes / 4}, DType::f32);   // zeros touches every page
  });
  if (!m.peak_reset_supported) GTEST_SKIP() << "process peak cannot be reset here";
  EXPECT_GE(m.reserved_peak_bytes, static_cast<uint64_t>(kBytes));
  EXPECT_GE(m.allocated_peak_bytes, static_cast<uint64_t>(kBytes));
  EXPECT_LT(outside_allocator_bytes(m), kSlack);
  EXPECT_GE(m.process_peak_bytes, m.present_before_bytes + kBytes - kSlack);
}

TEST(MemoryRecord, PadWorkloadFillsEveryLevel) {
  MemoryWorkloadOptions o;
  o.tiles = 4;
  o.channels = 4;
  EXPECT_EQ(pad_memory_workload_calls(o), 20);
  const MemoryRecord m = run_pad_memory_workload(o);
  EXPECT_GT(m.allocated_peak_bytes, 0u);
  EXPECT_GE(m.reserved_peak_bytes, m.allocated_peak_bytes);
  EXPECT_EQ(m.allocated_current_bytes, 0u);   // every tensor freed again
  EXPECT_GT(m.process_peak_bytes, 0u);
}

}  // namespace
}  // namespace fourfold
