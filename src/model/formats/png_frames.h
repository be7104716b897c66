// Video frames as PNG files a person can look at: frame_0000.png, frame_0001.png, ... (8-bit RGB), from and to
// a [1, 3, T, H, W] tensor in [-1, 1] (the VAE's pixel range: value = byte / 127.5 - 1).
#pragma once

#include <filesystem>
#include <vector>

#include "fourfold/tensor.h"

namespace fourfold::model {

// Writes one PNG per frame into dir (created); returns the paths. FormatError naming the file on failure;
// ValueError naming the frame and its count of NaN values, before any file is written, for a video holding NaN.
std::vector<std::filesystem::path> write_png_frames(const std::filesystem::path& dir, const Tensor& video,
                                                    const std::string& prefix = "frame");

// Reads every *.png of dir in name order, all of one size, into [1, 3, T, H, W] f32. FormatError naming the
// file for one that is not a regular file, an unreadable one, one declaring more than 64 Mpixel, or a size that
// differs from the first; naming the folder for more than 4096 frames or 512 Mpixel in all.
Tensor read_png_frames(const std::filesystem::path& dir);

}  // namespace fourfold::model
