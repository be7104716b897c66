// safetensors files: memory-mapped reading and writing. The header parsing itself is safetensors_header.cpp.
#include "model/formats/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "fourfold/errors.h"
#include "fourfold/parallel.h"

namespace fourfold::model {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; so is this reader");

// Owns one mapping (of the file, or of the anonymous memory its bytes were read into); every tensor viewing it
// holds this through its Storage's owner. data/size: the file's bytes; region/region_size: what to unmap.
class Mapping {
 public:
  Mapping(void* region, size_t region_size, const uint8_t* data, size_t size)
      : region_(region), region_size_(region_size), data_(data), size_(size) {}
  ~Mapping() { munmap(region_, region_size_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const uint8_t* bytes() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* region_;
  size_t region_size_;
  const uint8_t* data_;
  size_t size_;
};

constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kLoadChunk = size_t(32) << 20;   // per task: large reads, and enough tasks for every thread

// Anonymous memory on 2 MiB pages holding the file's bytes, read by all threads; read-only afterwards.
// Reports a finished chunk through the caller's progress, one thread at a time.
class ChunkReporter {
 public:
  explicit ChunkReporter(const LoadProgress& progress) : progress_(progress) {}
  void done(size_t bytes) {
    if (!progress_) return;
    std::lock_guard lock(mutex_);
    progress_(bytes);
  }

 private:
  const LoadProgress& progress_;
  std::mutex mutex_;
};

std::shared_ptr<Mapping> copy_file(int fd, size_t size, const std::string& name, const LoadProgress& progress) {
  const size_t region_size = (size + 2 * kHugePage - 1) / kHugePage * kHugePage;
  void* region = mmap(nullptr, region_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) fail<OutOfMemoryError>(name, "file", "memory for a copy of the weights", std::strerror(errno));
  auto* data = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(region) + kHugePage - 1) / kHugePage * kHugePage);
  madvise(data, size, MADV_HUGEPAGE);   // a hint: without THP the copy still works, on 4 KiB pages
  std::atomic<bool> failed{false};
  ChunkReporter reporter(progress);
  parallel_for(0, static_cast<int64_t>((size + kLoadChunk - 1) / kLoadChunk), 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      size_t at = static_cast<size_t>(c) * kLoadChunk;
      const size_t stop = std::min(size, at + kLoadChunk);
      const size_t chunk = stop - at;
      while (at < stop) {
        const ssize_t n = pread(fd, data + at, stop - at, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          failed = true;
          return;
        }
        at += static_cast<size_t>(n);
      }
      reporter.done(chunk);
    }
  });
  if (failed) {
    munmap(region, region_size);
    fail<FormatError>(name, "file", "readable to its end", std::strerror(errno));
  }
  mprotect(region, region_size, PROT_READ);   // the views stay read-only memory, as mapped ones are
  return std::make_shared<Mapping>(region, region_size, data, size);
}

// Every page of a mapping faulted in now, by all threads, instead of one by one during the first decode steps.
void populate(const uint8_t* data, size_t size, const LoadProgress& progress) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  ChunkReporter reporter(progress);
  parallel_for(0, static_cast<int64_t>((size + kLoadChunk - 1) / kLoadChunk), 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const uintptr_t from = reinterpret_cast<uintptr_t>(data) + static_cast<size_t>(c) * kLoadChunk;
      const uintptr_t to = std::min(reinterpret_cast<uintptr_t>(data) + size, from + kLoadChunk);
      const uintptr_t first = from / page * page;
      bool done = false;
#ifdef MADV_POPULATE_READ
      done = madvise(reinterpret_cast<void*>(first), to - first, MADV_POPULATE_READ) == 0;
#endif
      volatile uint8_t sink = 0;   // kernels before 5.14: touch one byte per page
      for (uintptr_t p = std::max(first, reinterpret_cast<uintptr_t>(data)); !done && p < to; p += page)
        sink = sink + *reinterpret_cast<const uint8_t*>(p);
      reporter.done(to - from);
    }
  });
}

struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) close(fd);
  }
};

std::shared_ptr<Mapping> map_file(const std::filesystem::path& path, WeightResidency residency,
                                  const LoadProgress& progress) {
  const std::string name = path.string();
  require_regular_file(path);   // before open: opening a FIFO would wait for a writer
  FileDescriptor f{open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) fail<FormatError>(name, "file", "a readable safetensors file", std::strerror(errno));
  struct stat st {};
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    fail<FormatError>(name, "file", "a regular file", "something else");
  const auto size = static_cast<size_t>(st.st_size);
  if (size < 8) {
    // Too short to hold the length field; mmap of an empty file fails, so let the parser say why from a copy.
    uint8_t small[8] = {};
    const ssize_t got = read(f.fd, small, size);
    parse_safetensors_header(small, got > 0 ? static_cast<size_t>(got) : 0, name);
  }
  if (residency == WeightResidency::copy) return copy_file(f.fd, size, name, progress);
  // At a 2 MiB-aligned address, with MADV_HUGEPAGE: the parts of the page cache held in 2 MiB folios (recent
  // kernels read into them) are then mapped by 2 MiB entries, which the GEMV streams faster, at no copy.
  const size_t region_size = size + kHugePage;
  void* region = mmap(nullptr, region_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) fail<FormatError>(name, "file", "address space to map the file", std::strerror(errno));
  void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(region) + kHugePage - 1) / kHugePage * kHugePage);
  void* addr = mmap(aligned, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, f.fd, 0);
  if (addr == MAP_FAILED) {
    munmap(region, region_size);
    fail<FormatError>(name, "file", "a file that can be memory-mapped", std::strerror(errno));
  }
  madvise(addr, size, MADV_HUGEPAGE);
  auto map = std::make_shared<Mapping>(region, region_size, static_cast<const uint8_t*>(addr), size);
  if (residency == WeightResidency::populate) populate(map->bytes(), size, progress);
  return map;
}

}  // namespace

std::string_view residency_name(WeightResidency r) {
  switch (r) {
    case WeightResidency::map: return "map";
    case WeightResidency::populate: return "populate";
    case WeightResidency::copy: return "copy";
  }
  return "?";
}

SafetensorsFile read_safetensors(const std::filesystem::path& path, WeightResidency residency,
                                 const LoadProgress& progress) {
  const std::shared_ptr<Mapping> map = map_file(path, residency, progress);
  const SafetensorsHeader header = parse_safetensors_header(map->bytes(), map->size(), path.string());
  SafetensorsFile out;
  out.metadata = header.metadata;
  (residency == WeightResidency::copy ? out.copied_bytes : out.mapped_bytes) = map->size();
  for (const SafetensorsEntry& e : header.tensors) {
    const uint8_t* data = map->bytes() + header.data_offset + e.begin;
    if (reinterpret_cast<uintptr_t>(data) % dtype_size(e.dtype) != 0) {
      Tensor copy = Tensor::empty(e.shape, e.dtype);
      if (e.end > e.begin) std::memcpy(copy.data(), data, e.end - e.begin);
      out.copied[e.name] = fmt::format("offset {} is not a multiple of its element size", header.data_offset + e.begin);
      out.tensors.emplace_back(e.name, std::move(copy));
    } else {
      out.tensors.emplace_back(e.name, Tensor::from_blob(const_cast<uint8_t*>(data), e.shape, e.dtype, map));
    }
  }
  return out;
}

void write_safetensors(const std::filesystem::path& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  const std::string name = path.string();
  std::vector<std::pair<std::string, Tensor>> ordered;
  std::set<std::string> seen;
  for (const auto& [tensor_name, t] : tensors) {
    if (!seen.insert(tensor_name).second)
      fail<ValueError>(name, "tensor " + tensor_name, "each name once", "it twice");
    if (!t.defined()) fail<ValueError>(name, "tensor " + tensor_name, "a defined tensor", "an undefined one");
    safetensors_dtype_name(t.dtype());   // UnsupportedError for complex64, before anything is written
    ordered.emplace_back(tensor_name, t);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    const auto key = [](const Tensor& t) {
      return t.nbytes() % 8 == 0 ? 0 : 8 - static_cast<int>(dtype_size(t.dtype()));
    };
    return key(a.second) < key(b.second);
  });

  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [tensor_name, t] : ordered) {
    header[tensor_name] = {{"dtype", safetensors_dtype_name(t.dtype())},
                           {"shape", t.shape()},
                           {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');   // the data region starts at a multiple of 8

  // Written next to the target and renamed, so that a failed write never leaves a half file under the name.
  AtomicFile out(path);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(uint64_t(text.size()) >> (8 * i));
  out.write(length, 8);
  out.write(text);
  for (const auto& [tensor_name, t] : ordered) {
    const Tensor c = t.contiguous();
    out.write(c.data(), c.nbytes());
  }
  out.commit();
}

std::optional<Tensor> stacked_view(const std::vector<Tensor>& parts) {
  if (parts.empty() || !parts[0].defined() || !parts[0].is_contiguous()) return std::nullopt;
  const Tensor& first = parts[0];
  const auto* base = static_cast<const uint8_t*>(first.data());
  const size_t nbytes = first.nbytes();
  // The distance between consecutive parts: nbytes when back to back, k * nbytes when each expert's other
  // tensors of the same size lie between (a name-ordered file: down, gate, up of expert 0, then of expert 1...).
  const ptrdiff_t step = parts.size() > 1 ? static_cast<const uint8_t*>(parts[1].data()) - base : ptrdiff_t(nbytes);
  if (nbytes == 0 || step < static_cast<ptrdiff_t>(nbytes) || step % static_cast<ptrdiff_t>(nbytes) != 0)
    return std::nullopt;
  auto owners = std::make_shared<std::vector<std::shared_ptr<Storage>>>();
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& p = parts[i];
    if (!p.defined() || p.dtype() != first.dtype() || p.shape() != first.shape() || !p.is_contiguous() ||
        static_cast<const uint8_t*>(p.data()) != base + i * step)
      return std::nullopt;
    owners->push_back(p.storage());
  }
  // Rows of one part's size from the first part to the end of the last, every k-th of them.
  const int64_t k = step / static_cast<ptrdiff_t>(nbytes), n = static_cast<int64_t>(parts.size());
  const Tensor rows = Tensor::from_blob(first.data(), {(n - 1) * k + 1, first.numel()}, first.dtype(), owners,
                                        first.device());
  Shape shape{n};
  shape.insert(shape.end(), first.shape().begin(), first.shape().end());
  return rows.slice(0, 0, (n - 1) * k + 1, k).view(shape);
}

}  // namespace fourfold::model
