// The safetensors header: an 8-byte little-endian length, that many bytes of JSON, then the data region.
// Parsing is separate from mapping so that the fuzzer (fuzz/safetensors_config_fuzzer.cpp) can feed it arbitrary
// bytes: this file and its .cpp need only nlohmann_json, fmt, errors and dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fourfold/dtype.h"

namespace fourfold::model {

struct SafetensorsEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;   // byte offsets into the data region, [begin, end)
  uint64_t end = 0;
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> tensors;          // in data order (by begin)
  std::map<std::string, std::string> metadata;    // "__metadata__" (string to string)
  uint64_t data_offset = 0;                       // where the data region starts in the file: 8 + header length
};

// Validates everything against `size`: the length field, JSON that is an object, each tensor's dtype, shape and
// data_offsets, their byte count against shape and dtype, offsets inside the data region, tensors neither
// overlapping nor leaving holes, names unique, __metadata__ strings only. Any violation: FormatError naming
// `file_name` and the tensor (or the header part). Never reads outside [bytes, bytes + size).
SafetensorsHeader parse_safetensors_header(const uint8_t* bytes, size_t size, const std::string& file_name);

// The format's dtype strings ("BF16", "F8_E4M3", ...) and back. An unknown string: FormatError naming `where`;
// a dtype safetensors cannot store (complex64): UnsupportedError.
DType safetensors_dtype(std::string_view name, const std::string& where);
std::string_view safetensors_dtype_name(DType dtype);

}  // namespace fourfold::model
