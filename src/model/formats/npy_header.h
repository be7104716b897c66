// The preamble and header of a NumPy .npy file, parsed from bytes with a small hand-written reader: the header is a
// Python dict literal of at most three keys, and the std::regex it was matched with before recursed once per
// character (a 200 KB header overflowed the stack). Depends on core only, so the fuzz build needs no more sources.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fourfold/dtype.h"
#include "fourfold/tensor.h"

namespace fourfold::model {

struct NpyHeader {
  DType dtype = DType::f32;
  Shape shape;
  uint64_t data_offset = 0;   // where the array's bytes begin
  uint64_t data_bytes = 0;    // numel * the dtype's size, checked to lie inside the file
};

// `bytes` is the whole file (versions 1, 2 and 3; '<f4', '<f8', '<i4', '<i8'; C order). FormatError naming `file`,
// the field and what was found for anything else: an unknown or repeated key, a malformed literal, a shape whose
// element count or byte count overflows, or data shorter than the shape says (checked before anything is
// allocated for it). Trailing bytes after the data are refused too: numpy never writes them.
NpyHeader parse_npy_header(std::string_view bytes, const std::string& file);

}  // namespace fourfold::model
