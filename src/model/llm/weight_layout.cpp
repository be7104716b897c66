// The checkpoint tensor list per architecture, as Hugging Face's modeling files name and shape them.
#include "model/llm/weight_layout.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/checked_math.h"

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

bool stored_as_fp8(const ModelConfig& config, const WeightSpec& spec) {
  if (!config.quantization) return false;
  return spec.role == WeightRole::projection || (spec.role == WeightRole::lm_head && config.quantization->lm_head_fp8());
}

std::string fp8_scale_name(const std::string& weight_name) { return weight_name + "_scale_inv"; }

Shape fp8_scale_shape(const ModelConfig& config, const Shape& weight_shape) {
  const auto& block = config.quantization ? config.quantization->weight_block_size : std::nullopt;
  if (!block) return {weight_shape[0], 1};
  return {(weight_shape[0] + block->first - 1) / block->first, (weight_shape[1] + block->second - 1) / block->second};
}

WeightTotals weight_totals(const ModelConfig& c, const std::string& where) {
  const auto mul = [&](int64_t a, int64_t b) { return checked_mul(a, b, where, "the sizes of config.json"); };
  const auto add = [&](int64_t a, int64_t b) { return checked_add(a, b, where, "the sizes of config.json"); };
  const int64_t h = c.hidden_size, q = mul(c.num_attention_heads, c.head_dim), kv = mul(c.num_key_value_heads, c.head_dim);
  // Sparse layers: (i + 1) % step == 0 for i < L, less those that mlp_only_layers makes dense.
  const int64_t step = std::max<int64_t>(c.decoder_sparse_step, 1);
  int64_t sparse = c.num_experts > 0 ? c.num_hidden_layers / step : 0;
  if (sparse > 0) {
    std::vector<int64_t> dense(c.mlp_only_layers);
    std::sort(dense.begin(), dense.end());
    dense.erase(std::unique(dense.begin(), dense.end()), dense.end());
    for (int64_t l : dense) sparse -= l < c.num_hidden_layers && (l + 1) % step == 0;
  }
  const int64_t dense_layers = c.num_hidden_layers - sparse;
  int64_t attention = add(add(mul(q, h), mul(2, mul(kv, h))), mul(h, q));
  attention = add(attention, mul(2, h) + (c.has_qk_norm() ? 2 * c.head_dim : 0));
  if (c.has_qkv_bias()) attention = add(attention, add(q, mul(2, kv)));
  if (c.has_o_bias()) attention = add(attention, h);
  const int64_t per_attention_tensors = 6 + (c.has_qk_norm() ? 2 : 0) + (c.has_qkv_bias() ? 3 : 0) + (c.has_o_bias() ? 1 : 0);
  WeightTotals t;
  t.tensors = add(add(mul(c.num_hidden_layers, per_attention_tensors), mul(dense_layers, 3)),
                  mul(sparse, add(1, mul(3, c.num_experts))));
  t.tensors = add(t.tensors, c.tie_word_embeddings ? 2 : 3);
  const int64_t embedding = mul(c.vocab_size, h);
  const int64_t experts = add(mul(c.num_experts, h), mul(3, mul(c.num_experts, mul(c.moe_intermediate_size, h))));
  t.elements = add(mul(c.num_hidden_layers, attention), mul(dense_layers, mul(3, mul(c.intermediate_size, h))));
  t.elements = add(t.elements, mul(sparse, experts));
  t.elements = add(t.elements, add(mul(c.tie_word_embeddings ? 1 : 2, embedding), h));
  return t;
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
