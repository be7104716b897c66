// What `fourfold make-model` and `fourfold quantize` do, as functions the tests call directly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/llm/model_config.h"

namespace fourfold::model {

struct WrittenModel {
  ModelConfig config;
  uint64_t bytes = 0;            // everything written: config, safetensors files, index
  uint64_t parameters = 0;       // elements of the weights (FP4 pairs as two values; FP8 and FP4 scales included)
  std::vector<std::string> copied_files;   // quantize: the folder's other files, copied as they are
};

inline constexpr uint64_t kDefaultMaxShardBytes = uint64_t(4) << 30;

// preset_config(preset, layers) with synthetic_weights(bf16, seed); dtype "fp8" further quantizes them
// (fp8-block), "nvfp4" / "mxfp4" their experts (quantize_checkpoint_fp4). Any other dtype: ValueError.
// all_projections (FP4 only): every projection, not only the routed experts (quantize_checkpoint_fp4).
WrittenModel make_model(const std::string& preset, const std::filesystem::path& out, const std::string& dtype,
                        uint64_t seed, std::optional<int64_t> layers,
                        uint64_t max_shard_bytes = kDefaultMaxShardBytes, bool all_projections = false);

// Loads `model`, quantizes it with `recipe` ("fp8-block", "fp8-row", "nvfp4" or "mxfp4") and writes the result
// to `out`. include_lm_head: lm_head quantized too (FP8 only, quantize_checkpoint); all_projections: every
// projection, not only the experts (FP4 only, quantize_checkpoint_fp4).
WrittenModel quantize_model_folder(const std::filesystem::path& model, const std::string& recipe,
                                   const std::filesystem::path& out, uint64_t max_shard_bytes = kDefaultMaxShardBytes,
                                   bool include_lm_head = false, bool all_projections = false);

}  // namespace fourfold::model
