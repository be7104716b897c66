// Loading a Hugging Face model folder (config.json + safetensors, memory-mapped). Declared here by the engine,
// which calls it; implemented by the loader (model_folder.cpp). Until that lands, model_folder_pending.cpp
// stands in and says so: delete it when merging the loader.
#pragma once

#include <cstdint>
#include <string>

#include "model/model_config.h"
#include "model/presets.h"

namespace fourfold::model {

struct LoadedModel {
  ModelConfig config;
  TensorMap weights;          // views of the mapped files where dtype and layout allow
  uint64_t mapped_bytes = 0;  // bytes of the safetensors files mapped
};

LoadedModel load_model_folder(const std::string& directory);

}  // namespace fourfold::model
