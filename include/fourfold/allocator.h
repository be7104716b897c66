// The allocator interface and the CPU caching allocator, with the statistics the memory record reads. Part of
// core (src/core/caching_allocator.cpp): every Tensor's storage comes from allocator_for().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "fourfold/device.h"

namespace fourfold {

// Public API, like MLX's memory.h: the memory record and users read these directly.
struct AllocatorStats {
  uint64_t allocated_bytes = 0;        // bytes requested by live allocations (what tensors asked for)
  uint64_t allocated_peak_bytes = 0;
  uint64_t reserved_bytes = 0;         // bytes held from the system: live blocks (rounded) plus the cache
  uint64_t reserved_peak_bytes = 0;
  // Of the reserved bytes, those a user ever asked for (each block's largest request, in 4 KiB pages): a block's
  // rounding tail beyond it is never written, so never resident. The untouched share (reserved - used) is also
  // kept as it stood when reserved peaked, for the memory record's identity.
  uint64_t reserved_used_bytes = 0;
  uint64_t reserved_untouched_at_peak_bytes = 0;
  uint64_t allocations = 0;            // calls of allocate()
  uint64_t frees = 0;                  // calls of deallocate()
  uint64_t cache_hits = 0;             // allocations served from a free list
  uint64_t cache_misses = 0;           // allocations that went to the system
  uint64_t system_frees = 0;           // blocks handed back to the system (empty_cache, limit pressure)
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Never returns null: a request that cannot be met throws OutOfMemoryError naming the size and the state.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr, size_t bytes) = 0;
  virtual Device device() const = 0;
  virtual AllocatorStats stats() const = 0;
  virtual void reset_peak() = 0;
  virtual void empty_cache() = 0;
};

inline constexpr size_t kAllocationAlignment = 64;

// Size-bucketed free lists (exact match on the rounded size), 64-byte alignment, thread-safe.
// Rounding: up to 64 KiB to multiples of 64 bytes; above, to a quarter of the enclosing power of two,
// which bounds the waste at 25% and lets a repeated workload of varying shapes hit the cache. Above 64 KiB,
// where the exact list is empty, the smallest cached block of at most twice the rounded size serves the
// request (and returns to its own list): a workload whose shapes shrink, like the edge tiles of a tiled VAE
// decode, reuses what it holds instead of reserving more; such a block wastes up to half its size while live.
class CachingAllocator final : public Allocator {
 public:
  CachingAllocator();
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;
  Device device() const override { return kCpu; }
  AllocatorStats stats() const override;
  void reset_peak() override;
  void empty_cache() override;

  // Caps reserved memory (0 = no cap). Past the cap the cache is emptied first, then OutOfMemoryError.
  // Lets a test or a user hold a workload to a budget; also how the out-of-memory path is tested.
  void set_reserved_limit(uint64_t bytes);
  uint64_t reserved_limit() const;
  static size_t round_size(size_t bytes);

 private:
  struct State;
  State* state_;
};

// The process-wide allocator of a device. CPU: the one set_host_cpu_allocator installed, else the
// CachingAllocator; other devices: DeviceError until built.
Allocator& allocator_for(Device device);
CachingAllocator& cpu_allocator();

// Routes every new CPU Tensor's storage through `allocator` (nullptr: back to cpu_allocator()), for a host
// program with an allocator of its own: the PyTorch extension installs PyTorch's, so that one cache, not two,
// holds what the ops allocate. Storages made before keep freeing into the allocator they came from. `allocator`
// must outlive every storage it makes.
void set_host_cpu_allocator(Allocator* allocator);
std::string describe_stats(const AllocatorStats& stats);

}  // namespace fourfold
