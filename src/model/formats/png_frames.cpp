#include "model/formats/png_frames.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <png.h>

#include "core/checked_math.h"
#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/formats/png_image.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;

// Bounds on a folder of frames. 4096 frames is 30 times a Wan clip (81 / 121 frames); 512 Mpixel in all is two
// 121-frame 1080p clips, 6 GiB as the f32 tensor. A PNG file itself may be up to 256 MiB (a 64 Mpixel frame
// stored uncompressed is 192 MiB).
constexpr size_t kMaxFrames = 4096;
constexpr int64_t kMaxTotalPixels = int64_t(512) << 20;
constexpr uint64_t kMaxPngFileBytes = uint64_t(256) << 20;

// The count of NaN values in each frame: a decode that gives NaN is broken, and a PNG cannot say so (a NaN
// cast to a byte is undefined; a black or mid-grey pixel in its place would hide the failure).
void refuse_nan_frames(const float* data, int64_t frames, int64_t pixels) {
  for (int64_t t = 0; t < frames; ++t) {
    int64_t nans = 0;
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 0; i < pixels; ++i) nans += std::isnan(data[((c * frames) + t) * pixels + i]) ? 1 : 0;
    if (nans > 0)
      fail<ValueError>("write_png_frames", "video", "finite or infinite values (NaN has no pixel value)",
                       fmt::format("{} NaN values in frame {} of {}", nans, t, frames));
  }
}

std::vector<fs::path> png_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    // Every *.png counts, whatever its kind: one that is a FIFO or a link to a device is refused when read,
    // not silently left out of the video.
    if (it->path().extension() != ".png") continue;
    if (files.size() == kMaxFrames)
      fail<FormatError>(dir.string(), "frames", fmt::format("at most {} .png files", kMaxFrames), "more");
    files.push_back(it->path());
  }
  if (ec || files.empty())
    fail<FormatError>(dir.string(), "frames", "a folder of .png frames", ec ? ec.message() : "none");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::vector<fs::path> write_png_frames(const fs::path& dir, const Tensor& video, const std::string& prefix) {
  if (video.dim() != 5 || video.size(0) != 1 || video.size(1) != 3)
    fail<ShapeError>("write_png_frames", "video", "[1, 3, T, H, W]", shape_string(video.shape()));
  const int64_t frames = video.size(2), h = video.size(3), w = video.size(4);
  const Tensor v = video.to(DType::f32).contiguous();
  const float* data = static_cast<const float*>(v.data());
  refuse_nan_frames(data, frames, h * w);   // before any file is written
  fs::create_directories(dir);
  std::vector<fs::path> paths;
  std::vector<uint8_t> rgb(static_cast<size_t>(h * w * 3));
  for (int64_t t = 0; t < frames; ++t) {
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 0; i < h * w; ++i) {
        const float x = data[((c * frames) + t) * h * w + i];
        const double byte = std::round((std::clamp(static_cast<double>(x), -1.0, 1.0) + 1.0) * 127.5);
        rgb[static_cast<size_t>(i * 3 + c)] = static_cast<uint8_t>(byte);
      }
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    image.width = static_cast<png_uint_32>(w);
    image.height = static_cast<png_uint_32>(h);
    image.format = PNG_FORMAT_RGB;
    const fs::path path = dir / fmt::format("{}_{:04d}.png", prefix, t);
    if (!png_image_write_to_file(&image, path.c_str(), 0, rgb.data(), 0, nullptr))
      throw FormatError(fmt::format("{}: cannot write PNG: {}", path.string(), image.message));
    paths.push_back(path);
  }
  return paths;
}

Tensor read_png_frames(const fs::path& dir) {
  const std::vector<fs::path> files = png_files(dir);
  const auto t = static_cast<int64_t>(files.size());
  // The first frame's header sets the size of all: the whole video is bounded before a pixel is decoded.
  std::string first = read_regular_file(files[0], kMaxPngFileBytes);   // read once: sized here, decoded below
  const PngSize size = png_size(first, files[0].string());
  const int64_t h = size.height, w = size.width;
  const int64_t total = checked_product(std::vector<int64_t>{t, h, w}, dir.string(), "frames x height x width");
  if (total > kMaxTotalPixels)
    fail<FormatError>(dir.string(), "frames", fmt::format("at most {} pixels in all", kMaxTotalPixels),
                      fmt::format("{} frames of {}x{} = {} pixels", t, w, h, total));
  Tensor out = Tensor::empty({1, 3, t, h, w}, DType::f32);
  float* data = static_cast<float*>(out.data());
  for (int64_t f = 0; f < t; ++f) {
    const std::string name = files[static_cast<size_t>(f)].string();
    const RgbImage image =
        decode_png_rgb(f == 0 ? std::move(first) : read_regular_file(name, kMaxPngFileBytes), name);
    if (image.height != h || image.width != w)
      fail<FormatError>(name, "size", fmt::format("{}x{} like the first frame", w, h),
                        fmt::format("{}x{}", image.width, image.height));
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 0; i < h * w; ++i)
        data[((c * t) + f) * h * w + i] = static_cast<float>(image.rgb[static_cast<size_t>(i * 3 + c)] / 127.5 - 1.0);
  }
  return out;
}

}  // namespace fourfold::model
