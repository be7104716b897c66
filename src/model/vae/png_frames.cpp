#include "model/vae/png_frames.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <png.h>

#include "fourfold/errors.h"

namespace fourfold::model {

std::vector<std::filesystem::path> write_png_frames(const std::filesystem::path& dir, const Tensor& video,
                                                    const std::string& prefix) {
  if (video.dim() != 5 || video.size(0) != 1 || video.size(1) != 3)
    fail<ShapeError>("write_png_frames", "video", "[1, 3, T, H, W]", shape_string(video.shape()));
  std::filesystem::create_directories(dir);
  const int64_t frames = video.size(2), h = video.size(3), w = video.size(4);
  const Tensor v = video.to(DType::f32).contiguous();
  const float* data = static_cast<const float*>(v.data());
  std::vector<std::filesystem::path> paths;
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
    const std::filesystem::path path = dir / fmt::format("{}_{:04d}.png", prefix, t);
    if (!png_image_write_to_file(&image, path.c_str(), 0, rgb.data(), 0, nullptr))
      throw FormatError(fmt::format("{}: cannot write PNG: {}", path.string(), image.message));
    paths.push_back(path);
  }
  return paths;
}

Tensor read_png_frames(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".png") files.push_back(e.path());
  if (ec || files.empty())
    throw FormatError(fmt::format("{}: expected a folder of .png frames, found {}", dir.string(),
                                  ec ? ec.message() : "none"));
  std::sort(files.begin(), files.end());
  int64_t h = 0, w = 0;
  std::vector<std::vector<uint8_t>> frames;
  for (const auto& f : files) {
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&image, f.c_str()))
      throw FormatError(fmt::format("{}: not a readable PNG: {}", f.string(), image.message));
    image.format = PNG_FORMAT_RGB;
    if (frames.empty()) {
      h = image.height;
      w = image.width;
    } else if (image.height != h || image.width != w) {
      png_image_free(&image);
      throw FormatError(fmt::format("{}: expected {}x{} like the first frame, found {}x{}", f.string(), w, h,
                                    image.width, image.height));
    }
    std::vector<uint8_t> rgb(PNG_IMAGE_SIZE(image));
    if (!png_image_finish_read(&image, nullptr, rgb.data(), 0, nullptr))
      throw FormatError(fmt::format("{}: cannot decode PNG: {}", f.string(), image.message));
    frames.push_back(std::move(rgb));
  }
  const int64_t t = static_cast<int64_t>(frames.size());
  Tensor out = Tensor::empty({1, 3, t, h, w}, DType::f32);
  float* data = static_cast<float*>(out.data());
  for (int64_t f = 0; f < t; ++f)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 0; i < h * w; ++i)
        data[((c * t) + f) * h * w + i] = static_cast<float>(frames[static_cast<size_t>(f)][static_cast<size_t>(i * 3 + c)] / 127.5 - 1.0);
  return out;
}

}  // namespace fourfold::model
