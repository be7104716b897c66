// The CPU caching allocator: rounded sizes, exact-size free lists (a larger cached block where the exact list is
// empty), statistics for the memory record.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <sys/mman.h>

#include <fmt/format.h>

#include "fourfold/allocator.h"
#include "fourfold/errors.h"

namespace fourfold {
namespace {

// Blocks of 2 MiB and more are 2 MiB aligned and advised as transparent-huge-page candidates: streaming a
// multi-GB weight over 4 KiB pages is held well below the read bandwidth by TLB misses, which huge pages
// avoid (docs/records.md, Probes). Advisory only: without THP support, or when the kernel declines, the pages
// stay ordinary.
constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kPageBytes = 4096;
// Sizes up to this round to the alignment only (exact free lists); above, to quarter steps.
constexpr size_t kExactRoundingBytes = 64 * 1024;

// What a block of `rounded` bytes holds from the system: whole pages.
size_t system_bytes(size_t rounded) { return (rounded + kPageBytes - 1) / kPageBytes * kPageBytes; }

// Every block is a mapping of its own, fresh pages that become resident only when touched, so the reserved
// bytes the memory record compares with the process's growth are exactly what that growth can come from.
// glibc's heap placed small blocks in pages an earlier stage had left resident, and "outside the allocator"
// read below zero by them. Under AddressSanitizer blocks come from malloc, so that it checks their bounds.
void* system_allocate(size_t rounded) {
  const size_t bytes = system_bytes(rounded);
#if defined(__SANITIZE_ADDRESS__)
  void* p = nullptr;
  return posix_memalign(&p, bytes < kHugePageBytes ? kAllocationAlignment : kHugePageBytes, bytes) == 0 ? p : nullptr;
#else
  const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
  if (bytes < kHugePageBytes) {
    void* p = mmap(nullptr, bytes, prot, flags, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  // 2 MiB aligned: map 2 MiB more and unmap what lies before and after the aligned block.
  void* raw = mmap(nullptr, bytes + kHugePageBytes, prot, flags, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (aligned > start) munmap(raw, aligned - start);
  const size_t tail = start + kHugePageBytes - aligned;   // the mapping ends at start + bytes + 2 MiB
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);   // a failure changes nothing but the page size
#endif
  return p;
#endif
}

void system_free(void* p, size_t rounded) {
#if defined(__SANITIZE_ADDRESS__)
  (void)rounded;
  std::free(p);
#else
  munmap(p, system_bytes(rounded));
#endif
}

}  // namespace

struct CachingAllocator::State {
  mutable std::mutex mutex;
  std::map<size_t, std::vector<void*>> free_lists;   // rounded size -> cached blocks
  struct Live {
    size_t requested;   // to count allocated bytes
    size_t block;       // the free list it returns to: its rounded size, or a larger cached block's
  };
  std::unordered_map<void*, Live> live;
  std::unordered_map<void*, size_t> used;   // every reserved block (live or cached) -> its largest request, paged
  AllocatorStats stats;
  uint64_t cached_bytes = 0;
  uint64_t limit = 0;

  // A cached block of at most twice `rounded` when none of that size is cached: a workload whose shapes shrink
  // (the edge tiles of a tiled VAE decode) reuses what it already holds instead of reserving more. Small sizes
  // stay exact: their lists are many and cheap to fill.
  static constexpr size_t kLargerBlockFrom = 64 * 1024;
  std::map<size_t, std::vector<void*>>::iterator larger_cached(size_t rounded) {
    if (rounded <= kLargerBlockFrom) return free_lists.end();
    for (auto it = free_lists.upper_bound(rounded); it != free_lists.end() && it->first <= 2 * rounded; ++it)
      if (!it->second.empty()) return it;
    return free_lists.end();
  }

  void release_cache_locked() {
    for (auto& [size, blocks] : free_lists) {
      for (void* p : blocks) {
        system_free(p, size);
        stats.reserved_bytes -= system_bytes(size);
        stats.reserved_used_bytes -= used[p];
        used.erase(p);
        ++stats.system_frees;
      }
    }
    free_lists.clear();
    cached_bytes = 0;
  }
};

CachingAllocator::CachingAllocator() : state_(new State) {}

CachingAllocator::~CachingAllocator() {
  {
    std::lock_guard lock(state_->mutex);
    state_->release_cache_locked();
  }
  delete state_;
}

size_t CachingAllocator::round_size(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes <= kExactRoundingBytes) return (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
  // Quarter steps of the enclosing power of two: (64 KiB, 128 KiB] rounds to 80, 96, 112, 128 KiB.
  const size_t pow2 = std::bit_ceil(bytes);
  const size_t step = pow2 / 8;   // pow2/2 .. pow2 covered in 4 steps of pow2/8
  return (bytes + step - 1) / step * step;
}

void* CachingAllocator::allocate(size_t bytes) {
  const size_t rounded = round_size(bytes);
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  ++s.stats.allocations;
  void* p = nullptr;
  size_t block = rounded;
  auto it = s.free_lists.find(rounded);
  if (it == s.free_lists.end() || it->second.empty()) it = s.larger_cached(rounded);
  if (it != s.free_lists.end()) {
    p = it->second.back();
    it->second.pop_back();
    block = it->first;
    s.cached_bytes -= block;
    ++s.stats.cache_hits;
  } else {
    ++s.stats.cache_misses;
    const size_t held = system_bytes(rounded);
    const bool over_limit = s.limit != 0 && s.stats.reserved_bytes + held > s.limit;
    if (over_limit) s.release_cache_locked();
    const bool still_over = s.limit != 0 && s.stats.reserved_bytes + held > s.limit;
    if (!still_over) {
      p = system_allocate(rounded);
      if (p == nullptr && s.cached_bytes > 0) {   // the system is short: give back the cache and retry once
        s.release_cache_locked();
        p = system_allocate(rounded);
      }
    }
    if (p == nullptr) {
      --s.stats.allocations;
      --s.stats.cache_misses;
      throw OutOfMemoryError(fmt::format(
          "CachingAllocator(cpu): cannot allocate {} bytes ({} rounded){}; state: {}", bytes, rounded,
          still_over ? fmt::format(", reserved limit {} bytes would be exceeded", s.limit) : ", the system refused",
          describe_stats(s.stats)));
    }
    s.stats.reserved_bytes += held;
  }
  size_t& used = s.used[p];
  // The pages a request reaches; the rest of the block's pages are its never-touched tail.
  const size_t paged = std::min(system_bytes(block), system_bytes(bytes));
  if (paged > used) {
    s.stats.reserved_used_bytes += paged - used;
    used = paged;
  }
  if (s.stats.reserved_bytes > s.stats.reserved_peak_bytes) {
    s.stats.reserved_peak_bytes = s.stats.reserved_bytes;
    s.stats.reserved_untouched_at_peak_bytes = s.stats.reserved_bytes - s.stats.reserved_used_bytes;
  }
  s.live.emplace(p, State::Live{bytes, block});
  s.stats.allocated_bytes += bytes;
  s.stats.allocated_peak_bytes = std::max(s.stats.allocated_peak_bytes, s.stats.allocated_bytes);
  return p;
}

void CachingAllocator::deallocate(void* ptr, size_t /*bytes*/) {
  if (ptr == nullptr) return;
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  auto it = s.live.find(ptr);
  if (it == s.live.end()) {
    // Freeing a pointer this allocator never gave out is a bug in the caller; abort loudly rather than corrupt.
    std::fprintf(stderr, "CachingAllocator::deallocate: pointer %p was not allocated here\n", ptr);
    std::abort();
  }
  const State::Live block = it->second;
  s.live.erase(it);
  s.stats.allocated_bytes -= block.requested;
  ++s.stats.frees;
  s.free_lists[block.block].push_back(ptr);
  s.cached_bytes += block.block;
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

void CachingAllocator::reset_peak() {
  std::lock_guard lock(state_->mutex);
  state_->stats.allocated_peak_bytes = state_->stats.allocated_bytes;
  state_->stats.reserved_peak_bytes = state_->stats.reserved_bytes;
  state_->stats.reserved_untouched_at_peak_bytes = state_->stats.reserved_bytes - state_->stats.reserved_used_bytes;
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(state_->mutex);
  state_->release_cache_locked();
}

void CachingAllocator::set_reserved_limit(uint64_t bytes) {
  std::lock_guard lock(state_->mutex);
  state_->limit = bytes;
}

uint64_t CachingAllocator::reserved_limit() const {
  std::lock_guard lock(state_->mutex);
  return state_->limit;
}

CachingAllocator& cpu_allocator() {
  // Never destroyed: tensors with static lifetime may free into it during exit.
  static CachingAllocator* allocator = new CachingAllocator();
  return *allocator;
}

namespace {
std::atomic<Allocator*>& host_cpu_allocator() {
  static std::atomic<Allocator*> installed{nullptr};
  return installed;
}
}  // namespace

void set_host_cpu_allocator(Allocator* allocator) { host_cpu_allocator().store(allocator, std::memory_order_release); }

Allocator& allocator_for(Device device) {
  if (device.type == DeviceType::cpu) {
    Allocator* host = host_cpu_allocator().load(std::memory_order_acquire);
    return host != nullptr ? *host : cpu_allocator();
  }
  fail<DeviceError>("allocator_for", "device", "cpu (no CUDA backend in this build)", device_name(device));
}

std::string describe_stats(const AllocatorStats& s) {
  return fmt::format(
      "allocated {} B (peak {} B), reserved {} B (peak {} B), {} allocations, {} frees, {} cache hits, "
      "{} cache misses, {} blocks returned to the system",
      s.allocated_bytes, s.allocated_peak_bytes, s.reserved_bytes, s.reserved_peak_bytes, s.allocations, s.frees,
      s.cache_hits, s.cache_misses, s.system_frees);
}

}  // namespace fourfold
