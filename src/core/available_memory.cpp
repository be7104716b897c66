#include "core/available_memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "fourfold/errors.h"

namespace fourfold {
namespace {

// "Key:   123 kB" lines of /proc/meminfo and /proc/self/status; "key 123" lines of a cgroup's memory.stat.
std::optional<uint64_t> field(const std::string& file, const std::string& key, uint64_t unit) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::istringstream rest(line.substr(key.size()));
    uint64_t value = 0;
    if (rest >> value) return value * unit;
  }
  return std::nullopt;
}

std::optional<uint64_t> single_number(const std::string& file) {
  std::ifstream in(file);
  uint64_t value = 0;
  if (in >> value) return value;
  return std::nullopt;   // also "max": no limit
}

// The cgroup v2 folder of this process ("0::/path" in /proc/self/cgroup), or empty.
std::string cgroup_folder() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  return {};
}

}  // namespace

std::optional<AvailableMemory> available_memory() {
  std::optional<AvailableMemory> best;
  const auto consider = [&](std::optional<uint64_t> bytes, const char* source) {
    if (bytes && (!best || *bytes < best->bytes)) best = AvailableMemory{*bytes, source};
  };
  consider(field("/proc/meminfo", "MemAvailable:", 1024), "MemAvailable in /proc/meminfo");
  const std::string cgroup = cgroup_folder();
  if (!cgroup.empty()) {
    const std::optional<uint64_t> max = single_number(cgroup + "/memory.max");
    const std::optional<uint64_t> anon = field(cgroup + "/memory.stat", "anon ", 1);
    if (max) consider(*max - std::min(*max, anon.value_or(0)), "the room under the cgroup's memory.max");
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const uint64_t used = field("/proc/self/status", "VmSize:", 1024).value_or(0);
    const uint64_t cap = static_cast<uint64_t>(limit.rlim_cur);
    consider(cap - std::min(cap, used), "the room under the address-space limit (ulimit -v)");
  }
  return best;
}

std::string memory_text(uint64_t n) {
  if (n >= (uint64_t(1) << 30)) return fmt::format("{:.2f} GiB", double(n) / double(uint64_t(1) << 30));
  if (n >= (uint64_t(1) << 20)) return fmt::format("{:.1f} MiB", double(n) / double(uint64_t(1) << 20));
  if (n >= (uint64_t(1) << 10)) return fmt::format("{:.1f} KiB", double(n) / double(uint64_t(1) << 10));
  return fmt::format("{} B", n);
}

void require_available_memory(uint64_t bytes, std::string_view subject, std::string_view what, std::string_view hint) {
  const std::optional<AvailableMemory> available = available_memory();
  if (!available || bytes <= available->bytes) return;
  fail<ValueError>(subject, "memory", fmt::format("at most the {} available ({})", memory_text(available->bytes),
                                                  available->source),
                   fmt::format("{} for {}{}{}", memory_text(bytes), what, hint.empty() ? "" : "; ", hint));
}

}  // namespace fourfold
