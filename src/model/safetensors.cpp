// safetensors files: memory-mapped reading and writing. The header parsing itself is safetensors_header.cpp.
#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "fourfold/errors.h"

namespace fourfold::model {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; so is this reader");

// Owns one mapping; every tensor viewing it holds this through its Storage's owner.
class Mapping {
 public:
  Mapping(void* addr, size_t size) : addr_(addr), size_(size) {}
  ~Mapping() { munmap(addr_, size_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(addr_); }
  size_t size() const { return size_; }

 private:
  void* addr_;
  size_t size_;
};

struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) close(fd);
  }
};

std::shared_ptr<Mapping> map_file(const std::filesystem::path& path) {
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
  void* addr = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (addr == MAP_FAILED) fail<FormatError>(name, "file", "a file that can be memory-mapped", std::strerror(errno));
  return std::make_shared<Mapping>(addr, size);
}

}  // namespace

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  const std::shared_ptr<Mapping> map = map_file(path);
  const SafetensorsHeader header = parse_safetensors_header(map->bytes(), map->size(), path.string());
  SafetensorsFile out;
  out.metadata = header.metadata;
  out.mapped_bytes = map->size();
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
