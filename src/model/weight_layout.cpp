// The checkpoint tensor list per architecture, as Hugging Face's modeling files name and shape them.
#include "model/weight_layout.h"

#include <fmt/format.h>

namespace fourfold::model {

bool ModelConfig::is_moe_layer(int64_t layer) const {
  if (num_experts == 0) return false;
  for (int64_t l : mlp_only_layers)
    if (l == layer) return false;
  return decoder_sparse_step > 0 && (layer + 1) % decoder_sparse_step == 0;
}

std::string layer_weight(int64_t layer, const std::string& suffix) {
  return fmt::format("model.layers.{}.{}", layer, suffix);
}

std::string expert_weight(int64_t layer, int64_t expert, const std::string& projection) {
  return fmt::format("model.layers.{}.mlp.experts.{}.{}.weight", layer, expert, projection);
}

std::string fp8_scale_name(const std::string& weight_name) { return weight_name + "_scale_inv"; }

Shape fp8_scale_shape(const ModelConfig& config, const Shape& weight_shape) {
  const auto& block = config.quantization ? config.quantization->weight_block_size : std::nullopt;
  if (!block) return {weight_shape[0], 1};
  return {(weight_shape[0] + block->first - 1) / block->first, (weight_shape[1] + block->second - 1) / block->second};
}

std::vector<WeightSpec> weight_layout(const ModelConfig& c) {
  const int64_t h = c.hidden_size, d = c.head_dim, q = c.num_attention_heads * d, kv = c.num_key_value_heads * d;
  std::vector<WeightSpec> w;
  const auto add = [&](std::string name, Shape shape, WeightRole role, int64_t layer) {
    const int64_t fan_in = role == WeightRole::projection || role == WeightRole::router || role == WeightRole::lm_head
                               ? shape[1]
                               : 0;
    w.push_back({std::move(name), std::move(shape), role, fan_in, layer});
  };
  add("model.embed_tokens.weight", {c.vocab_size, h}, WeightRole::embedding, -1);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    add(layer_weight(l, "input_layernorm.weight"), {h}, WeightRole::norm, l);
    add(layer_weight(l, "self_attn.q_proj.weight"), {q, h}, WeightRole::projection, l);
    add(layer_weight(l, "self_attn.k_proj.weight"), {kv, h}, WeightRole::projection, l);
    add(layer_weight(l, "self_attn.v_proj.weight"), {kv, h}, WeightRole::projection, l);
    if (c.attention_bias) {
      add(layer_weight(l, "self_attn.q_proj.bias"), {q}, WeightRole::bias, l);
      add(layer_weight(l, "self_attn.k_proj.bias"), {kv}, WeightRole::bias, l);
      add(layer_weight(l, "self_attn.v_proj.bias"), {kv}, WeightRole::bias, l);
    }
    add(layer_weight(l, "self_attn.o_proj.weight"), {h, q}, WeightRole::projection, l);
    if (c.has_o_bias()) add(layer_weight(l, "self_attn.o_proj.bias"), {h}, WeightRole::bias, l);
    if (c.has_qk_norm()) {
      add(layer_weight(l, "self_attn.q_norm.weight"), {d}, WeightRole::norm, l);
      add(layer_weight(l, "self_attn.k_norm.weight"), {d}, WeightRole::norm, l);
    }
    add(layer_weight(l, "post_attention_layernorm.weight"), {h}, WeightRole::norm, l);
    if (c.is_moe_layer(l)) {
      const int64_t mi = c.moe_intermediate_size;
      add(layer_weight(l, "mlp.gate.weight"), {c.num_experts, h}, WeightRole::router, l);
      for (int64_t e = 0; e < c.num_experts; ++e) {
        add(expert_weight(l, e, "gate_proj"), {mi, h}, WeightRole::projection, l);
        add(expert_weight(l, e, "up_proj"), {mi, h}, WeightRole::projection, l);
        add(expert_weight(l, e, "down_proj"), {h, mi}, WeightRole::projection, l);
      }
    } else {
      const int64_t i = c.intermediate_size;
      add(layer_weight(l, "mlp.gate_proj.weight"), {i, h}, WeightRole::projection, l);
      add(layer_weight(l, "mlp.up_proj.weight"), {i, h}, WeightRole::projection, l);
      add(layer_weight(l, "mlp.down_proj.weight"), {h, i}, WeightRole::projection, l);
    }
  }
  add("model.norm.weight", {h}, WeightRole::norm, -1);
  if (!c.tie_word_embeddings) add("lm_head.weight", {c.vocab_size, h}, WeightRole::lm_head, -1);
  return w;
}

}  // namespace fourfold::model
