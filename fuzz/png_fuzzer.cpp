// libFuzzer target: arbitrary bytes as a PNG file through the frame reader's decoder (read_png_frames reads each
// file and hands its bytes to decode_png_rgb). A small pixel cap keeps each run fast; the check that enforces it
// is the one read_png_frames relies on. Only fourfold's own errors may come out. Built by scripts/fuzz.sh.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fourfold/errors.h"
#include "model/formats/png_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr int64_t kMaxPixels = int64_t(1) << 20;
  try {
    const auto image = fourfold::model::decode_png_rgb(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.png", kMaxPixels);
    if (image.width * image.height > kMaxPixels ||
        image.rgb.size() != static_cast<size_t>(image.width * image.height * 3))
      std::abort();
  } catch (const fourfold::Error&) {
  }
  return 0;
}
