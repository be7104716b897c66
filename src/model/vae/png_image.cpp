#include "model/vae/png_image.h"

#include <fmt/format.h>
#include <png.h>

#include "core/checked_math.h"
#include "fourfold/errors.h"

namespace fourfold::model {
namespace {

// png_image_free on every way out between begin_read and a finish_read that did not run (finish_read frees).
struct ImageGuard {
  png_image& image;
  ~ImageGuard() { png_image_free(&image); }
};

}  // namespace

RgbImage decode_png_rgb(std::string_view bytes, const std::string& where, int64_t max_pixels) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
    fail<FormatError>(where, "PNG", "a readable PNG file", image.message);
  const ImageGuard guard{image};
  RgbImage out;
  out.width = image.width;
  out.height = image.height;
  // 64-bit and checked: libpng's PNG_IMAGE_SIZE is 32-bit arithmetic and wraps for 1,000,000 x 1,400 RGB.
  const int64_t pixels = checked_mul(out.width, out.height, where, "PNG width x height");
  if (pixels > max_pixels)
    fail<FormatError>(where, "PNG width x height", fmt::format("at most {} pixels", max_pixels),
                      fmt::format("{} x {} = {} pixels", out.width, out.height, pixels));
  image.format = PNG_FORMAT_RGB;
  out.rgb.resize(static_cast<size_t>(pixels * 3));
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr))
    fail<FormatError>(where, "PNG", "pixel data libpng can decode", image.message);
  return out;
}

}  // namespace fourfold::model
