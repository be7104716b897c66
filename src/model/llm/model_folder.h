// A Hugging Face model folder: config.json plus model.safetensors, or shards model-0000i-of-0000n.safetensors
// listed by model.safetensors.index.json's weight_map.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "model/llm/generation_config.h"
#include "model/llm/model_config.h"
#include "model/llm/presets.h"
#include "model/formats/safetensors.h"

namespace fourfold::model {

struct LoadedModel {
  ModelConfig config;
  TensorMap weights;                              // views into the mapped files, used in place
  uint64_t mapped_bytes = 0;                      // all safetensors files, mapped whole (map, populate)
  uint64_t file_copy_bytes = 0;                   // all safetensors files, read into anonymous memory (copy)
  std::map<std::string, std::string> file_of;     // tensor name -> the file (name within the folder) it came from
  std::map<std::string, std::string> copied;      // tensors copied out of the map instead, and why (misaligned)
  std::optional<GenerationConfig> generation;     // generation_config.json, when the folder has one
};

// Loads and checks a folder against weight_layout(config) (plus the f32 weight_scale_inv of every projection when
// config.quantization is set): a missing, extra or misshapen tensor, a dtype other than the config's torch_dtype
// (float8_e4m3fn projections and float32 scales for FP8 checkpoints), an index naming a file or tensor that is not
// there: FormatError naming the file and the tensor and what was expected.
// progress(done, total): bytes of the folder's safetensors read in so far, of all of them (copy and populate).
using FolderProgress = std::function<void(uint64_t done, uint64_t total)>;
LoadedModel load_model_folder(const std::filesystem::path& dir, WeightResidency residency = WeightResidency::map,
                              const FolderProgress& progress = {});

// The tensors, dtypes and shapes a checkpoint of `config` must hold, as load_model_folder checks them.
struct ExpectedTensor {
  Shape shape;
  DType dtype;
  bool any_float = false;   // bf16, f16 or f32 (a hybrid's small tensors: checkpoints keep some in f32)
};
std::map<std::string, ExpectedTensor> expected_tensors(const ModelConfig& config);
// FormatError (naming `where` and the tensor) unless `weights` holds exactly expected_tensors(config).
void check_weights(const ModelConfig& config, const TensorMap& weights, const std::string& where,
                   const std::map<std::string, std::string>& file_of = {});

// Writes config.json and the weights (checked first with check_weights) into `dir` (created if needed; earlier
// model.safetensors, shards and index there are removed). One model.safetensors when the data fits in
// max_shard_bytes, else shards of at most max_shard_bytes each (a group that is larger gets a shard of its own)
// with model.safetensors.index.json. Tensors go in weight_layout order except that each MoE layer's experts are
// grouped per projection (gate_proj 0..E-1, up_proj 0..E-1, down_proj 0..E-1, each group with its scales after
// it), never split across shards, so the engine can view a layer's experts as one [E, out, in] tensor.
// Returns the bytes written.
// The file names write_model_folder makes, which a later quantize or make-model into the same --out may replace:
// config.json, model.safetensors, model-NNNNN-of-NNNNN.safetensors, model.safetensors.index.json.
bool is_checkpoint_file_name(const std::string& name);

uint64_t write_model_folder(const std::filesystem::path& dir, const ModelConfig& config, const TensorMap& weights,
                            uint64_t max_shard_bytes = uint64_t(4) << 30);

// The same folder, byte for byte, for checkpoints larger than memory: the shards are planned from the config's
// tensor sizes, and weights_of(layer) makes one layer's tensors (layer -1: those outside the layers) when the
// writing reaches them, layers in order, each asked for once; a shard's tensors are let go once it is written.
// Each tensor is checked against expected_tensors (FormatError naming it).
uint64_t write_model_folder_streamed(const std::filesystem::path& dir, const ModelConfig& config,
                                     uint64_t max_shard_bytes,
                                     const std::function<TensorMap(int64_t layer)>& weights_of);

// The [E, out, in] view of layer `layer`'s experts' `projection` ("gate_proj", "up_proj", "down_proj") in
// `weights` (suffix "weight" or "weight_scale_inv"), without a copy when they lie back to back (as
// write_model_folder stores them), else a stacked copy.
Tensor stacked_experts(const ModelConfig& config, const TensorMap& weights, int64_t layer,
                       const std::string& projection, const std::string& suffix = "weight");

}  // namespace fourfold::model
