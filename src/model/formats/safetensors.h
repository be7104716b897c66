// Reading safetensors files as memory maps (tensors are views into the map, used in place) and writing them.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fourfold/tensor.h"
#include "model/formats/safetensors_header.h"

namespace fourfold::model {

// How a file's bytes reach memory (`--weights`). A decode reads every active weight once per token, so the page
// size under the weights sets how fast the GEMV can stream them (on 4 KiB pages the TLB misses keep a stream
// well below what 2 MiB pages read: docs/records.md, Probes), and a page first touched during decode costs a fault in
// the timed loop.
enum class WeightResidency {
  map,        // mapped from the page cache, faulted in on first use (4 KiB pages)
  populate,   // mapped, every page faulted in at load by all threads (MADV_POPULATE_READ)
  copy,       // read at load, by all threads, into anonymous memory on 2 MiB pages (MADV_HUGEPAGE)
};
std::string_view residency_name(WeightResidency r);   // "map", "populate", "copy"

struct SafetensorsFile {
  std::vector<std::pair<std::string, Tensor>> tensors;   // in data order
  std::map<std::string, std::string> metadata;
  uint64_t mapped_bytes = 0;                             // the file's size, all of it mapped (map, populate)
  uint64_t copied_bytes = 0;                             // the file's size, read into anonymous memory (copy)
  // Tensors copied out of the map instead of viewed, with why: a tensor whose offset is not a multiple of its
  // element size (possible in files other writers made) would be a misaligned pointer for the kernels.
  std::map<std::string, std::string> copied;
};

// Maps `path` (mmap PROT_READ, MAP_PRIVATE) and returns a view per tensor; the map is unmapped when the last
// view (and every tensor sharing its storage) is gone. The views are read-only memory: writing faults.
// A malformed file: FormatError naming the file and the tensor (see parse_safetensors_header); a file that
// cannot be opened: FormatError naming it.
// progress(bytes): called as parts of the file are read in (copy) or faulted in (populate), from any of the
// loading threads, one call at a time, with the bytes just done; never for map.
using LoadProgress = std::function<void(uint64_t bytes)>;
SafetensorsFile read_safetensors(const std::filesystem::path& path, WeightResidency residency = WeightResidency::map,
                                 const LoadProgress& progress = {});

// Writes `tensors` (any layout; CPU) as a safetensors file: header padded with spaces so that the data starts at
// a multiple of 8, data contiguous and little-endian with no holes. Tensors keep the given order except that
// those whose byte size is not a multiple of 8 go last, largest element size first: every tensor then starts at
// a multiple of its element size, and all the others at a multiple of 8. Tensors of equal size given next to
// each other (a layer's experts) stay next to each other in that order. Duplicate names: ValueError.
void write_safetensors(const std::filesystem::path& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// One [N, ...] view over N tensors of the same dtype and shape lying in memory at a constant distance that is a
// multiple of their size (back to back, as write_safetensors stores a layer's experts, or interleaved with the
// other projections of the same size, as a name-ordered file does), without a copy; nullopt when they do not.
std::optional<Tensor> stacked_view(const std::vector<Tensor>& parts);

}  // namespace fourfold::model
