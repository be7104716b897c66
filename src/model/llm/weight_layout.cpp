// The checkpoint tensor list per architecture, as Hugging Face's modeling files name and shape them.
#include "model/llm/weight_layout.h"

#include <algorithm>
#include <regex>

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

namespace {

// transformers' should_convert_module, for the hybrids' FP8 checkpoints, which leave some projections (the linear
// attention's, the shared expert's) in bf16 by name: an entry of modules_to_not_convert matches a module when it
// is the module, a prefix of it ending at a '.', a suffix of it, or a regex ("re:" dropped) matching from its start
// to a '.' or its end. The module is tried under the checkpoint's own prefix too ("model.language_model.").
bool not_converted(const ModelConfig& config, const std::string& weight_name) {
  const std::string module = weight_name.substr(0, weight_name.rfind('.'));
  std::vector<std::string> names = {module};
  if (!config.wrapper.empty() && module.rfind("model.", 0) == 0) names.push_back(config.weight_prefix() + module.substr(6));
  for (std::string key : config.quantization->modules_to_not_convert) {
    if (key.rfind("re:", 0) == 0) key = key.substr(3);
    for (const std::string& name : names) {
      if (name == key || name.rfind(key + ".", 0) == 0) return true;
      if (name.size() >= key.size() && name.compare(name.size() - key.size(), key.size(), key) == 0) return true;
      try {
        if (std::regex_search(name, std::regex("^(?:" + key + ")(?:\\.|$)"))) return true;
      } catch (const std::regex_error&) {
      }
    }
  }
  return false;
}

}  // namespace

bool stored_as_fp8(const ModelConfig& config, const WeightSpec& spec) {
  if (!config.quantization) return false;
  if (config.is_hybrid() && spec.role == WeightRole::projection) return !not_converted(config, spec.name);
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
  // Full-attention layers (every layer but a hybrid's linear ones): the gated q_proj is twice as tall.
  int64_t linear = 0;
  for (LayerType type : c.layer_types) linear += type == LayerType::linear_attention;
  const int64_t full = c.num_hidden_layers - linear;
  int64_t attention = add(add(mul(c.attn_output_gate() ? 2 : 1, mul(q, h)), mul(2, mul(kv, h))), mul(h, q));
  attention = add(attention, mul(2, h) + (c.has_qk_norm() ? 2 * c.head_dim : 0));
  if (c.has_qkv_bias()) attention = add(attention, add(q, mul(2, kv)));
  if (c.has_o_bias()) attention = add(attention, h);
  const int64_t per_attention_tensors = 6 + (c.has_qk_norm() ? 2 : 0) + (c.has_qkv_bias() ? 3 : 0) + (c.has_o_bias() ? 1 : 0);
  // Gated DeltaNet layers: in_proj_qkv, z, b, a, the conv, dt_bias, A_log, the gated norm, out_proj, two norms.
  const LinearAttentionConfig& la = c.linear;
  int64_t delta_net = add(mul(la.conv_dim(), add(h, la.conv_kernel)), mul(2, mul(la.value_dim(), h)));
  delta_net = add(delta_net, add(mul(la.num_value_heads, add(mul(2, h), 2)), add(la.value_head_dim, mul(2, h))));
  // A hybrid's shared expert: gate, up, down and its [1, H] gate.
  const bool shared = c.shared_expert_intermediate_size > 0;
  const int64_t shared_elements = shared ? add(mul(3, mul(c.shared_expert_intermediate_size, h)), h) : 0;
  WeightTotals t;
  t.tensors = add(add(mul(full, per_attention_tensors), mul(linear, 11)), mul(dense_layers, 3));
  t.tensors = add(t.tensors, mul(sparse, add(shared ? 5 : 1, mul(3, c.num_experts))));
  t.tensors = add(t.tensors, c.tie_word_embeddings ? 2 : 3);
  const int64_t embedding = mul(c.vocab_size, h);
  const int64_t experts = add(add(mul(c.num_experts, h), mul(3, mul(c.num_experts, mul(c.moe_intermediate_size, h)))),
                              shared_elements);
  t.elements = add(add(mul(full, attention), mul(linear, delta_net)), mul(dense_layers, mul(3, mul(c.intermediate_size, h))));
  t.elements = add(t.elements, mul(sparse, experts));
  t.elements = add(t.elements, add(mul(c.tie_word_embeddings ? 1 : 2, embedding), h));
  return t;
}

namespace {

// A layer's MLP: the experts with their router (and a hybrid's gated shared expert), or a dense MLP.
template <class Add>
void add_mlp(const ModelConfig& c, int64_t l, const Add& add) {
  const int64_t h = c.hidden_size;
  if (c.is_moe_layer(l)) {
    const int64_t mi = c.moe_intermediate_size;
    add(layer_weight(l, "mlp.gate.weight"), {c.num_experts, h}, WeightRole::router, l);
    for (int64_t e = 0; e < c.num_experts; ++e) {
      add(expert_weight(l, e, "gate_proj"), {mi, h}, WeightRole::projection, l);
      add(expert_weight(l, e, "up_proj"), {mi, h}, WeightRole::projection, l);
      add(expert_weight(l, e, "down_proj"), {h, mi}, WeightRole::projection, l);
    }
    if (c.shared_expert_intermediate_size > 0) {
      const int64_t si = c.shared_expert_intermediate_size;
      add(layer_weight(l, "mlp.shared_expert.gate_proj.weight"), {si, h}, WeightRole::projection, l);
      add(layer_weight(l, "mlp.shared_expert.up_proj.weight"), {si, h}, WeightRole::projection, l);
      add(layer_weight(l, "mlp.shared_expert.down_proj.weight"), {h, si}, WeightRole::projection, l);
      add(layer_weight(l, "mlp.shared_expert_gate.weight"), {1, h}, WeightRole::gate_linear, l);
    }
    return;
  }
  const int64_t i = c.intermediate_size;
  add(layer_weight(l, "mlp.gate_proj.weight"), {i, h}, WeightRole::projection, l);
  add(layer_weight(l, "mlp.up_proj.weight"), {i, h}, WeightRole::projection, l);
  add(layer_weight(l, "mlp.down_proj.weight"), {h, i}, WeightRole::projection, l);
}

}  // namespace

std::vector<WeightSpec> weight_layout(const ModelConfig& c) {
  const int64_t h = c.hidden_size, d = c.head_dim, q = c.num_attention_heads * d, kv = c.num_key_value_heads * d;
  std::vector<WeightSpec> w;
  const auto add = [&](std::string name, Shape shape, WeightRole role, int64_t layer) {
    const int64_t fan_in = role == WeightRole::projection || role == WeightRole::router || role == WeightRole::lm_head ||
                                   role == WeightRole::gate_linear
                               ? shape[1]
                               : 0;
    w.push_back({std::move(name), std::move(shape), role, fan_in, layer});
  };
  const LinearAttentionConfig& la = c.linear;
  add("model.embed_tokens.weight", {c.vocab_size, h}, WeightRole::embedding, -1);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    add(layer_weight(l, "input_layernorm.weight"), {h}, WeightRole::norm, l);
    if (c.is_linear_layer(l)) {
      // Gated DeltaNet (transformers' in_proj_qkv / z / b / a; Qwen3-Next's fused qkvz and ba are split at load).
      add(layer_weight(l, "linear_attn.in_proj_qkv.weight"), {la.conv_dim(), h}, WeightRole::projection, l);
      add(layer_weight(l, "linear_attn.in_proj_z.weight"), {la.value_dim(), h}, WeightRole::projection, l);
      add(layer_weight(l, "linear_attn.in_proj_b.weight"), {la.num_value_heads, h}, WeightRole::gate_linear, l);
      add(layer_weight(l, "linear_attn.in_proj_a.weight"), {la.num_value_heads, h}, WeightRole::gate_linear, l);
      add(layer_weight(l, "linear_attn.conv1d.weight"), {la.conv_dim(), 1, la.conv_kernel}, WeightRole::conv, l);
      add(layer_weight(l, "linear_attn.dt_bias"), {la.num_value_heads}, WeightRole::decay, l);
      add(layer_weight(l, "linear_attn.A_log"), {la.num_value_heads}, WeightRole::decay, l);
      add(layer_weight(l, "linear_attn.norm.weight"), {la.value_head_dim}, WeightRole::norm, l);
      add(layer_weight(l, "linear_attn.out_proj.weight"), {h, la.value_dim()}, WeightRole::projection, l);
      add(layer_weight(l, "post_attention_layernorm.weight"), {h}, WeightRole::norm, l);
      add_mlp(c, l, add);
      continue;
    }
    // The hybrids' q_proj yields each head's q and its output gate, interleaved per head.
    add(layer_weight(l, "self_attn.q_proj.weight"), {c.attn_output_gate() ? 2 * q : q, h}, WeightRole::projection, l);
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
    add_mlp(c, l, add);
  }
  add("model.norm.weight", {h}, WeightRole::norm, -1);
  if (!c.tie_word_embeddings) add("lm_head.weight", {c.vocab_size, h}, WeightRole::lm_head, -1);
  return w;
}

}  // namespace fourfold::model
