// make-model and quantize: presets and loaded folders, through quantize_checkpoint, into write_model_folder.
#include "model/llm/model_maker.h"

#include <algorithm>

#include "fourfold/errors.h"
#include "model/llm/model_folder.h"
#include "model/llm/presets.h"
#include "model/llm/quantize.h"

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
  const std::optional<Fp4Format> fp4 = parse_fp4_format(dtype);
  if (dtype != "bf16" && dtype != "fp8" && !fp4) fail<ValueError>("make-model", "--dtype", "bf16, fp8, nvfp4 or mxfp4", dtype);
  if (layers && *layers < 1) fail<ValueError>("make-model", "--layers", "at least 1", std::to_string(*layers));
  ModelConfig config = preset_config(preset, layers);
  config.torch_dtype = DType::bf16;
  require_memory_for_preset(preset, config, DType::bf16);
  TensorMap weights = synthetic_weights(config, DType::bf16, seed);
  if (dtype == "fp8" || fp4) {
    QuantizedCheckpoint q = fp4 ? quantize_checkpoint_fp4(config, weights, *fp4)
                                : quantize_checkpoint(config, weights, Fp8Recipe::block);
    config = std::move(q.config);
    weights = std::move(q.weights);
  }
  WrittenModel w{config, 0, parameter_count(weights), {}};
  w.bytes = write_model_folder(out, config, weights, max_shard_bytes);
  return w;
}

WrittenModel quantize_model_folder(const std::filesystem::path& model, const std::string& recipe,
                                   const std::filesystem::path& out, uint64_t max_shard_bytes, bool include_lm_head,
                                   bool all_projections) {
  const std::optional<Fp4Format> fp4 = parse_fp4_format(recipe);
  if (include_lm_head && fp4) fail<ValueError>("quantize", "--lm-head", "an FP8 recipe (FP4 keeps lm_head in bf16)", recipe);
  if (all_projections && !fp4) fail<ValueError>("quantize", "--all-projections", "an FP4 recipe (nvfp4, mxfp4)", recipe);
  const Fp8Recipe r = fp4 ? Fp8Recipe::block : parse_fp8_recipe(recipe);
  std::error_code ec;
  if (std::filesystem::equivalent(model, out, ec))
    fail<ValueError>("quantize", "--out", "a folder other than --model (the weights are read from it)", out.string());
  const LoadedModel loaded = load_model_folder(model);
  QuantizedCheckpoint q = fp4 ? quantize_checkpoint_fp4(loaded.config, loaded.weights, *fp4, all_projections)
                              : quantize_checkpoint(loaded.config, loaded.weights, r, include_lm_head);
  WrittenModel w{q.config, 0, parameter_count(q.weights), {}};
  w.bytes = write_model_folder(out, q.config, q.weights, max_shard_bytes);
  // Everything else that makes the folder a model (tokenizer files, generation_config.json, chat template,
  // README...) comes along, so the FP8 copy loads and tokenizes like the original.
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(model)) {
    const std::string name = entry.path().filename().string();
    const bool weights = entry.path().extension() == ".safetensors" || name == "model.safetensors.index.json";
    if (!entry.is_regular_file() || weights || name == "config.json") continue;
    std::filesystem::copy_file(entry.path(), out / name, std::filesystem::copy_options::overwrite_existing);
    w.copied_files.push_back(name);
    w.bytes += entry.file_size();
  }
  std::sort(w.copied_files.begin(), w.copied_files.end());
  return w;
}

}  // namespace fourfold::model
