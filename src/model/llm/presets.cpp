// The built-in presets and their deterministic random weights.
#include "model/llm/presets.h"

#include <cmath>
#include <cstdint>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/available_memory.h"
#include "fourfold/errors.h"
#include "model/llm/weight_layout.h"

namespace fourfold::model {
namespace {

ModelConfig qwen3_moe_base() {
  ModelConfig c;
  c.model_type = "qwen3_moe";
  c.rms_norm_eps = 1e-6;
  c.rope_theta = 1e6;
  c.norm_topk_prob = true;
  c.torch_dtype = DType::bf16;
  return c;
}

ModelConfig tiny_moe() {
  ModelConfig c = qwen3_moe_base();
  c.hidden_size = 128;
  c.intermediate_size = 256;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 32;
  c.vocab_size = 1024;
  c.max_position_embeddings = 4096;
  c.num_experts = 8;
  c.num_experts_per_tok = 2;
  c.moe_intermediate_size = 64;
  return c;
}

ModelConfig tiny_qwen3() {
  ModelConfig c = tiny_moe();
  c.model_type = "qwen3";
  c.num_experts = c.num_experts_per_tok = c.moe_intermediate_size = 0;
  c.tie_word_embeddings = true;
  return c;
}

ModelConfig tiny_llama() {
  ModelConfig c = tiny_qwen3();
  c.model_type = "llama";
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 500000.0;
  c.tie_word_embeddings = false;
  c.rope_scaling = RopeScaling{};   // Llama 3.1's: factor 8, low 1, high 4, original 8192
  return c;
}

// About 490M parameters (0.98 GB in bf16): 8 layers of 32 experts (4 active) of width 512 at hidden 1024.
ModelConfig small_moe() {
  ModelConfig c = qwen3_moe_base();
  c.hidden_size = 1024;
  c.intermediate_size = 2816;
  c.num_hidden_layers = 8;
  c.num_attention_heads = 16;
  c.num_key_value_heads = 4;
  c.head_dim = 64;
  c.vocab_size = 32000;
  c.max_position_embeddings = 32768;
  c.num_experts = 32;
  c.num_experts_per_tok = 4;
  c.moe_intermediate_size = 512;
  return c;
}

// Qwen/Qwen3-30B-A3B's config.json.
ModelConfig qwen3_30b_a3b() {
  ModelConfig c = qwen3_moe_base();
  c.hidden_size = 2048;
  c.intermediate_size = 6144;
  c.num_hidden_layers = 48;
  c.num_attention_heads = 32;
  c.num_key_value_heads = 4;
  c.head_dim = 128;
  c.vocab_size = 151936;
  c.max_position_embeddings = 40960;
  c.num_experts = 128;
  c.num_experts_per_tok = 8;
  c.moe_intermediate_size = 768;
  return c;
}

const std::map<std::string, std::function<ModelConfig()>>& presets() {
  static const std::map<std::string, std::function<ModelConfig()>> table = {
      {"tiny-moe", tiny_moe},   {"tiny-qwen3", tiny_qwen3},       {"tiny-llama", tiny_llama},
      {"small-moe", small_moe}, {"qwen3-30b-a3b", qwen3_30b_a3b},
  };
  return table;
}

// A per-tensor seed: the run's seed mixed with the tensor's name (FNV-1a), so adding a tensor never shifts the
// values of the others.
uint64_t tensor_seed(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return h;
}

bool is_residual_output(const std::string& name) {
  return name.find("o_proj.weight") != std::string::npos || name.find("down_proj.weight") != std::string::npos;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : presets()) names.push_back(name);
  return names;
}

ModelConfig preset_config(const std::string& name, std::optional<int64_t> layers) {
  const auto it = presets().find(name);
  if (it == presets().end())
    fail<ValueError>("make-model", "preset", fmt::format("one of {}", fmt::join(preset_names(), ", ")), name);
  ModelConfig c = it->second();
  if (layers) {
    if (*layers < 1) fail<ValueError>("make-model", "layers", "at least 1", std::to_string(*layers));
    c.num_hidden_layers = *layers;
  }
  return c;
}

void require_memory_for_preset(const std::string& name, const ModelConfig& config, DType dtype) {
  const WeightTotals totals = weight_totals(config, "preset " + name);
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(totals.elements), dtype_size(dtype), &bytes)) bytes = UINT64_MAX;
  require_available_memory(bytes, "preset " + name,
                           fmt::format("its {} weights ({} layers)", dtype_name(dtype), config.num_hidden_layers),
                           "--layers N builds fewer");
}

TensorMap synthetic_weights(const ModelConfig& config, DType dtype, uint64_t seed) {
  if (dtype != DType::bf16 && dtype != DType::f16 && dtype != DType::f32)
    fail<DTypeError>("make-model", "dtype", "bf16, f16 or f32 (fp8 is made by quantizing these)",
                     std::string(dtype_name(dtype)));
  const double residual_scale = 1.0 / std::sqrt(2.0 * static_cast<double>(std::max<int64_t>(config.num_hidden_layers, 1)));
  TensorMap weights;
  // Each layer's experts of one projection share one [E, out, in] block, as a checkpoint writer lays them out,
  // so the engine stacks them by a view instead of a copy.
  std::map<std::string, Tensor> expert_blocks;
  const auto expert_slot = [&](const WeightSpec& spec) -> std::optional<Tensor> {
    const size_t at = spec.name.find(".mlp.experts.");
    if (at == std::string::npos) return std::nullopt;
    const size_t e_begin = at + 13, e_end = spec.name.find('.', e_begin);
    const int64_t expert = std::stoll(spec.name.substr(e_begin, e_end - e_begin));
    const std::string key = spec.name.substr(0, e_begin) + spec.name.substr(e_end);
    auto it = expert_blocks.find(key);
    if (it == expert_blocks.end()) {
      Shape shape = spec.shape;
      shape.insert(shape.begin(), config.num_experts);
      it = expert_blocks.emplace(key, Tensor::empty(shape, dtype)).first;
    }
    return it->second.select(0, expert);
  };
  for (const WeightSpec& spec : weight_layout(config)) {
    Tensor t = expert_slot(spec).value_or(Tensor());
    if (!t.defined()) t = Tensor::empty(spec.shape, dtype);
    const uint64_t s = tensor_seed(seed, spec.name);
    switch (spec.role) {
      case WeightRole::embedding: t.fill_normal(s, 0.0, 1.0); break;
      case WeightRole::norm: t.fill_uniform(s, 0.9, 1.1); break;
      case WeightRole::bias: t.fill_normal(s, 0.0, 0.02); break;
      case WeightRole::projection:
      case WeightRole::router:
      case WeightRole::lm_head: {
        double stddev = 1.0 / std::sqrt(static_cast<double>(spec.fan_in));
        if (is_residual_output(spec.name)) stddev *= residual_scale;
        t.fill_normal(s, 0.0, stddev);
        break;
      }
    }
    weights.emplace(spec.name, std::move(t));
  }
  return weights;
}

}  // namespace fourfold::model
