#include "model/formats/png_image.h"

#include <fmt/format.h>
#include <png.h>

#include "core/checked_math.h"
#include "fourfold/errors.h"

namespace fourfold::model {
namespace {

// png_image_free on every way out after begin_read succeeded (finish_read frees too; a second free is a no-op).
struct ImageGuard {
  png_image& image;
  ~ImageGuard() { png_image_free(&image); }
};

// Reads the header and refuses more than max_pixels; returns width x height. The pixel count is 64-bit and
// checked: libpng's PNG_IMAGE_SIZE is 32-bit arithmetic and wraps for large declared sizes.
int64_t begin_read(png_image& image, std::string_view bytes, const std::string& where, int64_t max_pixels) {
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
    fail<FormatError>(where, "PNG", "a readable PNG file", image.message);
  const int64_t pixels = checked_mul(image.width, image.height, where, "PNG width x height");
  if (pixels > max_pixels) {
    png_image_free(&image);
    fail<FormatError>(where, "PNG width x height", fmt::format("at most {} pixels", max_pixels),
                      fmt::format("{} x {} = {} pixels", image.width, image.height, pixels));
  }
  return pixels;
}

}  // namespace

PngSize png_size(std::string_view bytes, const std::string& where, int64_t max_pixels) {
  png_image image{};
  begin_read(image, bytes, where, max_pixels);
  const ImageGuard guard{image};
  return {image.width, image.height};
}

RgbImage decode_png_rgb(std::string_view bytes, const std::string& where, int64_t max_pixels) {
  png_image image{};
  const int64_t pixels = begin_read(image, bytes, where, max_pixels);
  const ImageGuard guard{image};
  RgbImage out;
  out.width = image.width;
  out.height = image.height;
  image.format = PNG_FORMAT_RGB;
  out.rgb.resize(static_cast<size_t>(pixels * 3));
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr))
    fail<FormatError>(where, "PNG", "pixel data libpng can decode", image.message);
  return out;
}

}  // namespace fourfold::model
