// fourfold's tensors inside PyTorch come from PyTorch's CPU allocator: installed once when the extension loads,
// so that the ops' outputs and temporaries live in the one allocator a PyTorch user already has (and its
// profiler and memory tools see), not in a second cache of fourfold's own beside it (issue: the VAE's peak RSS
// rose by fourfold's cache on top of PyTorch's).
#include <atomic>
#include <cstdlib>
#include <string_view>

#include <c10/core/CPUAllocator.h>

#include "fourfold/allocator.h"
#include "fourfold/errors.h"

namespace {

// No cache of its own: what PyTorch's CPU allocator does with a freed block is what happens to it.
class TorchCpuAllocator final : public fourfold::Allocator {
 public:
  void* allocate(size_t bytes) override {
    void* p = c10::GetCPUAllocator()->raw_allocate(bytes == 0 ? 1 : bytes);
    if (p == nullptr) throw fourfold::OutOfMemoryError("PyTorch's CPU allocator returned null");
    const uint64_t now = allocated_.fetch_add(bytes) + bytes;
    uint64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    allocations_.fetch_add(1);
    return p;
  }
  void deallocate(void* ptr, size_t bytes) override {
    c10::GetCPUAllocator()->raw_deallocate(ptr);
    allocated_.fetch_sub(bytes);
    frees_.fetch_add(1);
  }
  fourfold::Device device() const override { return fourfold::kCpu; }
  fourfold::AllocatorStats stats() const override {
    fourfold::AllocatorStats s;
    s.allocated_bytes = s.reserved_bytes = s.reserved_used_bytes = allocated_.load();
    s.allocated_peak_bytes = s.reserved_peak_bytes = peak_.load();
    s.allocations = s.cache_misses = allocations_.load();
    s.frees = s.system_frees = frees_.load();
    return s;
  }
  void reset_peak() override { peak_.store(allocated_.load()); }
  void empty_cache() override {}

 private:
  std::atomic<uint64_t> allocated_{0}, peak_{0}, allocations_{0}, frees_{0};
};

// Never destroyed: a tensor freed during interpreter exit still finds it. FOURFOLD_TORCH_ALLOCATOR=fourfold keeps
// fourfold's caching allocator instead (a second cache, for measuring what the one cache costs or saves).
const bool kInstalled = [] {
  const char* choice = std::getenv("FOURFOLD_TORCH_ALLOCATOR");
  if (choice != nullptr && std::string_view(choice) == "fourfold") return false;
  fourfold::set_host_cpu_allocator(new TorchCpuAllocator());
  return true;
}();

}  // namespace
