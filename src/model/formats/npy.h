// NumPy's .npy format (version 1.0), the lingua franca for handing arrays to another engine: `run --logits`
// writes one, and a reader takes latents or golden arrays back.
#pragma once

#include <filesystem>

#include "fourfold/tensor.h"

namespace fourfold::model {

// Writes `t` (f32, f64, i32 or i64; any layout) as a little-endian C-order .npy file. ValueError for other dtypes;
// FormatError naming the path when it cannot be written.
void write_npy(const std::filesystem::path& path, const Tensor& t);

// Reads a C-order little-endian .npy file of '<f4', '<f8', '<i4' or '<i8' (at most 4 GiB). FormatError naming the file and the
// header field for anything else or for a truncated file.
Tensor read_npy(const std::filesystem::path& path);

}  // namespace fourfold::model
