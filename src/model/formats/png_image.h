// One PNG decoded from bytes in memory to 8-bit RGB, its declared size checked before a byte is allocated for it:
// a 100-byte file may declare 1,000,000 x 1,400 pixels, and 782 KB of IDAT may inflate to 6 GB. Depends only on
// libpng and core/, so the PNG fuzz target builds from this file alone. Ancillary chunks (zTXt, iCCP) stay
// within libpng's own defaults, which the simplified API keeps: 8 MB a chunk, 1000 chunks (pnglibconf.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fourfold::model {

// 64 Mpixel: an 8K frame (7680 x 4320, 33 Mpixel) fits twice; 192 MiB of RGB bytes.
inline constexpr int64_t kMaxPngPixels = int64_t(64) << 20;

struct RgbImage {
  int64_t width = 0, height = 0;
  std::vector<uint8_t> rgb;   // row by row, 3 bytes a pixel
};

// The width and height a PNG's header declares (nothing allocated for the pixels, nothing inflated). FormatError
// naming `where` for bytes that do not start a PNG, or that declare more than max_pixels pixels.
struct PngSize {
  int64_t width = 0, height = 0;
};
PngSize png_size(std::string_view bytes, const std::string& where, int64_t max_pixels = kMaxPngPixels);

// FormatError naming `where` for bytes that are not a PNG libpng can decode, or that declare more than
// max_pixels pixels (refused after the header is read, before the pixels are allocated or inflated).
RgbImage decode_png_rgb(std::string_view bytes, const std::string& where, int64_t max_pixels = kMaxPngPixels);

}  // namespace fourfold::model
