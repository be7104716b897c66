// Reading safetensors files as memory maps (tensors are views into the map, used in place) and writing them.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fourfold/tensor.h"
#include "model/safetensors_header.h"

namespace fourfold::model {

struct SafetensorsFile {
  std::vector<std::pair<std::string, Tensor>> tensors;   // in data order
  std::map<std::string, std::string> metadata;
  uint64_t mapped_bytes = 0;                             // the file's size, all of it mapped
  // Tensors copied out of the map instead of viewed, with why: a tensor whose offset is not a multiple of its
  // element size (possible in files other writers made) would be a misaligned pointer for the kernels.
  std::map<std::string, std::string> copied;
};

// Maps `path` (mmap PROT_READ, MAP_PRIVATE) and returns a view per tensor; the map is unmapped when the last
// view (and every tensor sharing its storage) is gone. The views are read-only memory: writing faults.
// A malformed file: FormatError naming the file and the tensor (see parse_safetensors_header); a file that
// cannot be opened: FormatError naming it.
SafetensorsFile read_safetensors(const std::filesystem::path& path);

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
