// libFuzzer target: arbitrary bytes into the safetensors header parser and the config.json parser. The parsers
// may only answer with fourfold's own errors (FormatError, UnsupportedError, ...); anything else - another
// exception, a crash, an ASan or UBSan report - fails the run. Built by scripts/fuzz.sh from just these sources.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fourfold/errors.h"
#include "model/llm/model_config.h"
#include "model/formats/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto header = fourfold::model::parse_safetensors_header(data, size, "fuzz.safetensors");
    // What the mapping code relies on: every accepted tensor lies inside the file.
    for (const auto& t : header.tensors)
      if (t.begin > t.end || header.data_offset + t.end > size) std::abort();
  } catch (const fourfold::Error&) {
  }
  try {
    fourfold::model::parse_model_config(std::string_view(reinterpret_cast<const char*>(data), size), "config.json");
  } catch (const fourfold::Error&) {
  }
  return 0;
}
