// Where a run's or a check's model comes from: a model folder (mapped), or a preset built in memory. The one
// place that calls the loader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/llm/generation_config.h"
#include "model/llm/model_config.h"
#include "model/llm/model_folder.h"
#include "model/llm/presets.h"
#include "model/formats/safetensors.h"

namespace fourfold::model {

struct ModelSource {
  std::string name;           // the folder, or the preset's name
  bool from_files = false;
  std::string config_hash;    // FNV-1a of config.json's bytes (folders only)
  ModelConfig config;
  TensorMap weights;
  uint64_t mapped_bytes = 0;  // 0 for a preset: its weights live in the allocator
  uint64_t file_copy_bytes = 0;   // --weights copy: the files read into anonymous 2 MiB pages
  WeightResidency residency = WeightResidency::map;
  double load_seconds = 0.0;      // reading, checking (and populating or copying) the folder
  std::optional<GenerationConfig> generation;   // the folder's generation_config.json, if any
  std::string description() const;   // "preset tiny-moe (qwen3_moe, 2 layers, hidden 128, 8 experts / 2 active)"
};

// model_dir non-empty: load_model_folder. Else the preset (default tiny-moe) with synthetic bf16 weights from
// `seed`; `layers` overrides a preset's layer count.
ModelSource open_model(const std::string& model_dir, const std::string& preset, uint64_t seed,
                       std::optional<int64_t> layers = std::nullopt,
                       WeightResidency residency = WeightResidency::map, const FolderProgress& progress = {});

}  // namespace fourfold::model
