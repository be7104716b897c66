// make-model and quantize: presets and loaded folders, through quantize_checkpoint, into write_model_folder.
#include "model/llm/model_maker.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/available_memory.h"
#include "fourfold/errors.h"
#include "model/llm/model_folder.h"
#include "model/llm/presets.h"
#include "model/llm/quantize.h"
#include "model/llm/weight_layout.h"

namespace fourfold::model {
namespace {

// Elements of the weights (FP4 pairs counted as two, scales included).
uint64_t parameter_count(const TensorMap& weights) {
  uint64_t n = 0;
  for (const auto& [name, t] : weights) n += static_cast<uint64_t>(t.numel()) * (is_fp4(t.dtype()) ? 2 : 1);
  return n;
}

// What a layer-at-a-time make-model holds at once (the tensors outside the layers, the largest layer in bf16 and
// a shard being written) must fit in memory, and the folder on the disk; else a ValueError naming the preset.
void require_room_to_stream(const std::string& preset, const ModelConfig& plain, const ModelConfig& config,
                            const std::filesystem::path& out, uint64_t max_shard_bytes) {
  std::map<int64_t, uint64_t> layer_bytes;
  for (const WeightSpec& spec : weight_layout(plain))
    layer_bytes[spec.layer] += static_cast<uint64_t>(shape_numel(spec.shape)) * dtype_size(DType::bf16);
  uint64_t largest = 0, folder = 0;
  for (const auto& [layer, bytes] : layer_bytes)
    if (layer >= 0) largest = std::max(largest, bytes);
  for (const auto& [name, e] : expected_tensors(config)) folder += static_cast<uint64_t>(shape_numel(e.shape)) * dtype_size(e.dtype);
  require_available_memory(layer_bytes[-1] + 2 * largest + std::min(max_shard_bytes, folder), "preset " + preset,
                           "one layer of its bfloat16 weights at a time, with the tensors outside the layers and a shard",
                           "--layers N builds fewer");
  std::error_code ec;
  std::filesystem::path where = out;
  while (!where.empty() && !std::filesystem::exists(where, ec)) where = where.parent_path();
  const std::filesystem::space_info space = std::filesystem::space(where.empty() ? "." : where, ec);
  if (!ec && space.available < folder)
    fail<ValueError>("make-model", "--out", fmt::format("{} free on its disk for the folder", memory_text(folder)),
                     fmt::format("{} available at {}", memory_text(space.available), where.string()));
}

}  // namespace

WrittenModel make_model(const std::string& preset, const std::filesystem::path& out, const std::string& dtype,
                        uint64_t seed, std::optional<int64_t> layers, uint64_t max_shard_bytes, bool all_projections) {
  const std::optional<Fp4Format> fp4 = parse_fp4_format(dtype);
  if (dtype != "bf16" && dtype != "fp8" && !fp4) fail<ValueError>("make-model", "--dtype", "bf16, fp8, nvfp4 or mxfp4", dtype);
  if (all_projections && !fp4) fail<ValueError>("make-model", "--all-projections", "--dtype nvfp4 or mxfp4", dtype);
  if (layers && *layers < 1) fail<ValueError>("make-model", "--layers", "at least 1", std::to_string(*layers));
  ModelConfig config = preset_config(preset, layers);
  config.torch_dtype = DType::bf16;
  if (dtype == "fp8") {   // FP8's quantize checks the whole checkpoint: made in memory
    require_memory_for_preset(preset, config, DType::bf16);
    QuantizedCheckpoint q = quantize_checkpoint(config, synthetic_weights(config, DType::bf16, seed), Fp8Recipe::block);
    WrittenModel w{q.config, 0, parameter_count(q.weights), {}};
    w.bytes = write_model_folder(out, q.config, q.weights, max_shard_bytes);
    return w;
  }
  // bf16 and FP4 a layer at a time (the full-size presets do not fit in memory as bf16): the same bytes.
  const ModelConfig plain = config;
  if (fp4) config.fp4 = fp4_quantization(*fp4, all_projections);
  require_room_to_stream(preset, plain, config, out, max_shard_bytes);
  WrittenModel w{config, 0, 0, {}};
  w.bytes = write_model_folder_streamed(out, config, max_shard_bytes, [&](int64_t layer) {
    TensorMap part = synthetic_weights_of_layer(plain, DType::bf16, seed, layer);
    if (fp4) part = quantize_fp4_tensors(config, std::move(part));
    w.parameters += parameter_count(part);
    return part;
  });
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
