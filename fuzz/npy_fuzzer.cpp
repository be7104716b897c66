// libFuzzer target: arbitrary bytes as a .npy file's header and data. Only fourfold's own errors may come out, and
// an accepted header must describe data that lies exactly inside the bytes (what read_npy copies).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fourfold/errors.h"
#include "model/formats/npy_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto h = fourfold::model::parse_npy_header(std::string_view(reinterpret_cast<const char*>(data), size),
                                                     "fuzz.npy");
    if (h.data_offset > size || h.data_bytes != size - h.data_offset) std::abort();
  } catch (const fourfold::Error&) {
  }
  return 0;
}
