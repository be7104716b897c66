// make-model and quantize: presets and loaded folders, through quantize_checkpoint, into write_model_folder.
#include "model/model_maker.h"

#include "fourfold/errors.h"
#include "model/model_folder.h"
#include "model/presets.h"
#include "model/quantize.h"

namespace fourfold::model {
namespace {

uint64_t parameter_count(const TensorMap& weights) {
  uint64_t n = 0;
  for (const auto& [name, t] : weights) n += static_cast<uint64_t>(t.numel());
  return n;
}

}  // namespace

WrittenModel make_model(const std::string& preset, const std::filesystem::path& out, const std::string& dtype,
                        uint64_t seed, std::optional<int64_t> layers, uint64_t max_shard_bytes) {
  if (dtype != "bf16" && dtype != "fp8") fail<ValueError>("make-model", "--dtype", "bf16 or fp8", dtype);
  if (layers && *layers < 1) fail<ValueError>("make-model", "--layers", "at least 1", std::to_string(*layers));
  ModelConfig config = preset_config(preset, layers);
  config.torch_dtype = DType::bf16;
  TensorMap weights = synthetic_weights(config, DType::bf16, seed);
  if (dtype == "fp8") {
    QuantizedCheckpoint q = quantize_checkpoint(config, weights, Fp8Recipe::block);
    config = std::move(q.config);
    weights = std::move(q.weights);
  }
  WrittenModel w{config, 0, parameter_count(weights)};
  w.bytes = write_model_folder(out, config, weights, max_shard_bytes);
  return w;
}

WrittenModel quantize_model_folder(const std::filesystem::path& model, const std::string& recipe,
                                   const std::filesystem::path& out, uint64_t max_shard_bytes) {
  const Fp8Recipe r = parse_fp8_recipe(recipe);
  const LoadedModel loaded = load_model_folder(model);
  QuantizedCheckpoint q = quantize_checkpoint(loaded.config, loaded.weights, r);
  WrittenModel w{q.config, 0, parameter_count(q.weights)};
  w.bytes = write_model_folder(out, q.config, q.weights, max_shard_bytes);
  return w;
}

}  // namespace fourfold::model
