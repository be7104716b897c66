// libFuzzer target: arbitrary bytes into what the Wan VAE loader reads before any tensor - the config.json
// parser (with its bounds and consistency checks), the index's weight_map parser shared with the LLM loader,
// and the safetensors header parser. Only fourfold's own errors may come out; anything else - another exception,
// a crash, an ASan or UBSan report - fails the run. Built by scripts/fuzz.sh from just these sources.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fourfold/errors.h"
#include "model/formats/folder_files.h"
#include "model/formats/safetensors_header.h"
#include "model/vae/wan_vae_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto c = fourfold::model::parse_wan_vae_config(std::string(text), "config.json");
    // What the network relies on from an accepted config: sizes it can multiply and frames it can count.
    if (c.decoded_frames(1000) != 1 + 999 * c.scale_factor_temporal) std::abort();
    if (c.pixel_channels(true) < 1 || c.pixel_channels(false) < 1) std::abort();
  } catch (const fourfold::Error&) {
  }
  try {
    for (const auto& [tensor, file] : fourfold::model::parse_weight_map(text, "index.json"))
      if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos ||
          file.find('\0') != std::string::npos)
        std::abort();
  } catch (const fourfold::Error&) {
  }
  try {
    const auto header = fourfold::model::parse_safetensors_header(data, size, "fuzz.safetensors");
    for (const auto& t : header.tensors)
      if (t.begin > t.end || header.data_offset + t.end > size) std::abort();
  } catch (const fourfold::Error&) {
  }
  return 0;
}
