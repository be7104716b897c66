// The built-in presets and their deterministic random weights.
#include "model/llm/presets.h"

#include <cmath>
#include <cstdint>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/available_memory.h"
#include "core/fnv1a.h"
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

// The hybrids: Gated DeltaNet in 3 of every 4 layers, every 4th full attention with an output gate and a quarter
// of each head rotated, zero-centred norms, experts plus a gated shared expert.
ModelConfig hybrid_base(int64_t layers) {
  ModelConfig c;
  c.model_type = "qwen3_5_moe_text";
  c.rms_norm_eps = 1e-6;
  c.norm_topk_prob = true;
  c.torch_dtype = DType::bf16;
  c.partial_rotary_factor = 0.25;
  c.num_hidden_layers = layers;
  for (int64_t i = 0; i < layers; ++i)
    c.layer_types.push_back((i + 1) % 4 != 0 ? LayerType::linear_attention : LayerType::full_attention);
  return c;
}

// Qwen/Qwen3.6-35B-A3B's text config (the Qwen3.5-35B-A3B shapes): 40 layers, 256 experts of 512 (8 active).
ModelConfig qwen3_6_35b_a3b() {
  ModelConfig c = hybrid_base(40);
  c.hidden_size = 2048;
  c.num_attention_heads = 16;
  c.num_key_value_heads = 2;
  c.head_dim = 256;
  c.vocab_size = 248320;
  c.max_position_embeddings = 262144;
  c.rope_theta = 1e7;
  c.num_experts = 256;
  c.num_experts_per_tok = 8;
  c.moe_intermediate_size = 512;
  c.shared_expert_intermediate_size = 512;
  c.linear = LinearAttentionConfig{4, 128, 128, 16, 32};
  return c;
}

// The same design at test size: 3 Gated DeltaNet layers and 1 full-attention layer.
ModelConfig tiny_hybrid() {
  ModelConfig c = hybrid_base(4);
  c.hidden_size = 128;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 32;
  c.vocab_size = 1024;
  c.max_position_embeddings = 4096;
  c.rope_theta = 1e6;
  c.num_experts = 8;
  c.num_experts_per_tok = 2;
  c.moe_intermediate_size = 64;
  c.shared_expert_intermediate_size = 64;
  c.linear = LinearAttentionConfig{4, 32, 32, 2, 4};
  return c;
}

ModelConfig with_layers(ModelConfig c, int64_t layers) {
  c.num_hidden_layers = layers;
  if (c.is_hybrid()) {
    c.layer_types.clear();
    for (int64_t i = 0; i < layers; ++i)
      c.layer_types.push_back((i + 1) % 4 != 0 ? LayerType::linear_attention : LayerType::full_attention);
  }
  return c;
}

const std::map<std::string, std::function<ModelConfig()>>& presets() {
  static const std::map<std::string, std::function<ModelConfig()>> table = {
      {"tiny-moe", tiny_moe},   {"tiny-qwen3", tiny_qwen3},       {"tiny-llama", tiny_llama},
      {"small-moe", small_moe}, {"qwen3-30b-a3b", qwen3_30b_a3b}, {"tiny-hybrid", tiny_hybrid},
      {"qwen3.6-35b-a3b", qwen3_6_35b_a3b},
  };
  return table;
}

// A per-tensor seed: the run's seed mixed with the tensor's name (FNV-1a), so adding a tensor never shifts the
// values of the others.
uint64_t tensor_seed(uint64_t seed, const std::string& name) {
  return fnv1a64(name, kFnv1aBasis ^ seed);
}

bool is_residual_output(const std::string& name) {
  return name.find("o_proj.weight") != std::string::npos || name.find("down_proj.weight") != std::string::npos ||
         name.find("out_proj.weight") != std::string::npos;
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
    c = with_layers(c, *layers);   // a hybrid keeps its pattern: layers 4, 8, ... are full attention
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

namespace {

TensorMap synthetic_weights_where(const ModelConfig& config, DType dtype, uint64_t seed,
                                  const std::function<bool(const WeightSpec&)>& wanted);

}  // namespace

TensorMap synthetic_weights(const ModelConfig& config, DType dtype, uint64_t seed) {
  return synthetic_weights_where(config, dtype, seed, [](const WeightSpec&) { return true; });
}

TensorMap synthetic_weights_of_layer(const ModelConfig& config, DType dtype, uint64_t seed, int64_t layer) {
  return synthetic_weights_where(config, dtype, seed, [&](const WeightSpec& s) { return s.layer == layer; });
}

namespace {

TensorMap synthetic_weights_where(const ModelConfig& config, DType dtype, uint64_t seed,
                                  const std::function<bool(const WeightSpec&)>& wanted) {
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
    if (!wanted(spec)) continue;
    Tensor t = expert_slot(spec).value_or(Tensor());
    if (!t.defined()) t = Tensor::empty(spec.shape, dtype);
    const uint64_t s = tensor_seed(seed, spec.name);
    switch (spec.role) {
      case WeightRole::embedding: t.fill_normal(s, 0.0, 1.0); break;
      case WeightRole::norm:
        // A zero-centred norm multiplies by 1 + w (Gated DeltaNet's own norm by w).
        if (config.zero_centred_norms() && spec.name.find("linear_attn.norm") == std::string::npos)
          t.fill_uniform(s, -0.1, 0.1);
        else
          t.fill_uniform(s, 0.9, 1.1);
        break;
      case WeightRole::bias: t.fill_normal(s, 0.0, 0.02); break;
      case WeightRole::conv: t.fill_normal(s, 0.0, 1.0 / std::sqrt(static_cast<double>(spec.shape.back()))); break;
      case WeightRole::decay:
        // A_log = log(A), A in [1, 16] (decays of e^-1 to e^-16 per unit of softplus); dt_bias around 0.
        if (spec.name.find("A_log") != std::string::npos) {
          Tensor a = Tensor::empty(spec.shape, DType::f64);
          a.fill_uniform(s, 1.0, 16.0);
          std::vector<double> v = a.to_vector();
          for (double& x : v) x = std::log(x);
          t.copy_from(Tensor::from_vector(v, spec.shape, DType::f64));
        } else {
          t.fill_normal(s, 0.0, 0.5);
        }
        break;
      case WeightRole::projection:
      case WeightRole::router:
      case WeightRole::gate_linear:
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

}  // namespace

}  // namespace fourfold::model
