// How much more memory this process can take, read before building or loading something large, so that a model
// that cannot fit is refused up front with its size and what is available, instead of the machine swapping or
// the allocator failing minutes in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fourfold {

struct AvailableMemory {
  uint64_t bytes = 0;
  std::string source;   // which limit it is: "MemAvailable in /proc/meminfo", "the cgroup's memory.max", ...
};

// The smallest of: the system's MemAvailable (/proc/meminfo); the room under this process's cgroup v2
// memory.max (less the cgroup's anonymous memory: its page cache can be reclaimed); the room under its
// address-space limit (RLIMIT_AS less VmSize). nullopt when none can be read: nothing is refused on a guess.
std::optional<AvailableMemory> available_memory();

// ValueError naming `subject` ("preset qwen3-30b-a3b"), the bytes `what` needs ("its bf16 weights") and what is
// available, when `bytes` exceed available_memory(). `hint` (may be empty) says how to ask for less.
void require_available_memory(uint64_t bytes, std::string_view subject, std::string_view what, std::string_view hint);

// "1.50 GiB", "12.0 MiB", "512 B".
std::string memory_text(uint64_t bytes);

}  // namespace fourfold
