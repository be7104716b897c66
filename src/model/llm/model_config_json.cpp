// config.json <-> ModelConfig. Self-contained (nlohmann_json, errors, dtype names) so that the fuzz build
// (scripts/fuzz.sh) can compile it without the rest of the library. Every error names the file and the key.
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fourfold/errors.h"
#include "model/formats/bounded_json.h"
#include "model/formats/checked_json.h"
#include "model/formats/json_excerpt.h"
#include "model/llm/model_config.h"
#include "model/llm/model_config_defaults.h"

namespace fourfold::model {
namespace {

using nlohmann::json;

constexpr const char* kModelTypes =
    "one of qwen3_moe, qwen3, qwen2, llama, qwen3_5_moe, qwen3_5_moe_text, qwen3_5, qwen3_5_text, qwen3_next";
constexpr int64_t kMaxConfigInteger = (int64_t(1) << 31) - 1;

// The keys of one JSON object with transformers' defaults where a key is absent (CheckedObject), and the
// decoders' bound on integers: every size of these architectures fits in 31 bits, which keeps products of two of
// them exact.
class Reader : public CheckedObject {
 public:
  using CheckedObject::CheckedObject;

  int64_t integer(const char* key, std::optional<int64_t> fallback = std::nullopt, int64_t min = 1) const {
    return CheckedObject::integer(key, fallback, min, kMaxConfigInteger);
  }
  double positive(const char* key, std::optional<double> fallback = std::nullopt) const {
    const double value = number(key, fallback);
    if (!(value > 0)) bad(key, "a positive number", value);
    return value;
  }
};

// Records each key that was absent and took transformers' default, as "key = value".
class Defaults {
 public:
  explicit Defaults(std::vector<std::string>& taken) : taken_(taken) {}
  template <class T>
  T take(const Reader& r, const char* key, T value) {
    if (!r.find(key)) taken_.push_back(fmt::format("{} = {}", key, value));
    return value;
  }

 private:
  std::vector<std::string>& taken_;
};

// One key that transformers has spelled two ways: the found one's name, nullptr when neither is present.
// Both present with different values is an error (the config contradicts itself).
const char* either_spelling(const Reader& r, const char* newer, const char* older) {
  const json* a = r.find(newer);
  const json* b = r.find(older);
  if (a && b && *a != *b)
    r.bad(older, fmt::format("the value of '{}' ({}), or only one of the two", newer, json_excerpt(*a)), *b);
  return a ? newer : b ? older : nullptr;
}

// transformers 5 writes "dtype", 4.x "torch_dtype". Absent: the loader takes the weights' dtype.
void parse_torch_dtype(const Reader& r, ModelConfig& c) {
  const char* key = either_spelling(r, "dtype", "torch_dtype");
  c.torch_dtype_stated = key != nullptr;
  if (!key) return;
  const std::string name = r.string(key);
  if (name == "bfloat16") c.torch_dtype = DType::bf16;
  else if (name == "float16") c.torch_dtype = DType::f16;
  else if (name == "float32") c.torch_dtype = DType::f32;
  else r.bad(key, "one of bfloat16, float16, float32", name);
}

// A hybrid's partial_rotary_factor, in (0, 1]: in the rope dict (transformers 5), else at the top (older
// Qwen3-Next configs), else transformers' default 0.25. Its MRoPE sections rotate text tokens as one plain rope.
void parse_partial_rotary(const Reader& top, const Reader* rope, ModelConfig& c, Defaults& d) {
  const Reader& r = rope != nullptr && rope->find("partial_rotary_factor") ? *rope : top;
  const char* key = "partial_rotary_factor";
  c.partial_rotary_factor = r.find(key) ? r.number(key) : d.take(top, key, 0.25);
  const json found = r.find(key) ? *r.find(key) : json(c.partial_rotary_factor);
  if (!(c.partial_rotary_factor > 0.0 && c.partial_rotary_factor <= 1.0) || c.rotary_dim() < 2)
    r.bad(key, "a number in (0, 1] that leaves at least 2 of head_dim's dims to rotate", found);
  if (c.rotary_dim() % 2 != 0)
    r.bad(key, fmt::format("a factor that gives an even count of rotated dims (head_dim {})", c.head_dim), found);
  if (rope != nullptr && (rope->find("mrope_section") || rope->find("mrope_interleaved")))
    c.notes.push_back("rope mrope_section ignored: text tokens have one position on every section, a plain rope");
}
void parse_partial_rotary(const Reader& top, const Reader& rope, ModelConfig& c, Defaults& d) {
  parse_partial_rotary(top, &rope, c, d);
}

// The rope: transformers 5's "rope_parameters" {rope_type, rope_theta, ...scaling keys}, or 4.x's top-level
// "rope_theta" with "rope_scaling" {rope_type or type, ...}. As transformers does, a non-null rope_scaling wins
// over rope_parameters, and a rope_theta inside the dict wins over the top-level one.
void parse_rope(const Reader& r, ModelConfig& c, Defaults& d) {
  const char* key = r.find("rope_scaling") ? "rope_scaling" : r.find("rope_parameters") ? "rope_parameters" : nullptr;
  const bool top = r.find("rope_theta") != nullptr;
  const double top_theta = top ? r.positive("rope_theta") : kDefaultRopeTheta;
  c.rope_scaling.reset();
  if (!key) {
    c.rope_theta = top ? top_theta : d.take(r, "rope_theta", kDefaultRopeTheta);
    if (c.is_hybrid()) parse_partial_rotary(r, nullptr, c, d);
    return;
  }
  const json& v = r.require(key);
  if (!v.is_object()) r.bad(key, "an object or null", v);
  const Reader s(v, r.file(), key);
  for (const char* layer_type : {"full_attention", "sliding_attention"})
    if (s.find(layer_type))
      fail_field<UnsupportedError>(r.file(), s.path(layer_type), "one rope for every layer (not one per layer type)",
                             json_excerpt(v));
  c.rope_theta = s.find("rope_theta") ? s.positive("rope_theta")
                 : top                 ? top_theta
                                       : d.take(r, "rope_theta", kDefaultRopeTheta);
  if (c.is_hybrid()) {
    parse_partial_rotary(r, s, c, d);
  } else if (s.find("partial_rotary_factor") && s.number("partial_rotary_factor") != 1.0) {
    fail_field<UnsupportedError>(r.file(), s.path("partial_rotary_factor"), "1.0 (rotary over the whole head)",
                           json_excerpt(*s.find("partial_rotary_factor")));
  }
  // Older configs spell rope_type as "type".
  const char* type_key = s.find("rope_type") ? "rope_type" : "type";
  const std::string type = s.string(type_key, "default");
  if (type == "default") return;
  if (c.is_hybrid())
    fail_field<UnsupportedError>(r.file(), s.path(type_key), "default (the rope of the Qwen3.5 / Qwen3-Next hybrids)", type);
  if (type != "llama3" && type != "linear")
    fail_field<UnsupportedError>(r.file(), s.path(type_key),
                           "default, linear or llama3 (the rope types fourfold implements)", type);
  RopeScaling rs;
  rs.rope_type = type;
  rs.factor = s.positive("factor");
  if (type == "llama3") {
    rs.low_freq_factor = s.positive("low_freq_factor");
    rs.high_freq_factor = s.positive("high_freq_factor");
    // transformers' standardize_rope_params: the pretraining length defaults to max_position_embeddings.
    rs.original_max_position_embeddings = s.integer("original_max_position_embeddings", c.max_position_embeddings);
    if (!s.find("original_max_position_embeddings"))
      c.defaults_taken.push_back(fmt::format("{}.original_max_position_embeddings = {} (max_position_embeddings)",
                                             key, c.max_position_embeddings));
    if (!(rs.high_freq_factor > rs.low_freq_factor))
      s.bad("high_freq_factor", "a value above low_freq_factor", *v.find("high_freq_factor"));
  }
  c.rope_scaling = rs;
}

std::vector<std::string> string_list(const Reader& q, const char* key) {
  std::vector<std::string> out;
  const json* m = q.find(key);
  if (!m) return out;
  if (!m->is_array()) q.bad(key, "an array of strings", *m);
  for (const json& name : *m) {
    if (!name.is_string()) q.bad(key, "an array of strings", *m);
    out.push_back(name.get<std::string>());
  }
  return out;
}

// compressed-tensors' FP4 formats: every config group's weights must be 4-bit floats in the format's blocks.
Fp4Quantization parse_fp4(const Reader& q) {
  Fp4Quantization out;
  const std::string format = q.string("format");
  if (format != "nvfp4-pack-quantized" && format != "mxfp4-pack-quantized")
    fail_field<UnsupportedError>(q.file(), q.path("format"), "nvfp4-pack-quantized or mxfp4-pack-quantized", format);
  out.nv = format == "nvfp4-pack-quantized";
  out.ignore = string_list(q, "ignore");
  out.targets.clear();
  const json& groups = q.require("config_groups");
  if (!groups.is_object() || groups.empty()) q.bad("config_groups", "an object of one or more groups", groups);
  for (const auto& [name, group] : groups.items()) {
    if (!group.is_object()) q.bad("config_groups", "an object of groups", groups);
    const Reader g(group, q.file(), q.path("config_groups") + "." + name);
    const json& weights = g.require("weights");
    if (!weights.is_object()) g.bad("weights", "an object", weights);
    const Reader w(weights, q.file(), g.path("weights"));
    if (w.integer("num_bits") != 4) w.bad("num_bits", "4", *w.find("num_bits"));
    if (w.string("type") != "float") w.bad("type", "\"float\"", *w.find("type"));
    if (w.integer("group_size") != out.block())
      w.bad("group_size", fmt::format("{} (the block of {})", out.block(), format), *w.find("group_size"));
    for (std::string& t : string_list(g, "targets")) out.targets.push_back(std::move(t));
  }
  if (out.targets.empty()) q.bad("config_groups", "groups with targets", groups);
  return out;
}

std::optional<Fp8Quantization> parse_quantization(const Reader& r, ModelConfig& c) {
  const json* v = r.find("quantization_config");
  if (!v) return std::nullopt;
  if (!v->is_object()) r.bad("quantization_config", "an object or null", *v);
  const Reader q(*v, r.file(), "quantization_config");
  const std::string method = q.string("quant_method");
  if (method == "compressed-tensors") {
    c.fp4 = parse_fp4(q);
    return std::nullopt;
  }
  if (method != "fp8")
    fail_field<UnsupportedError>(r.file(), "quantization_config.quant_method", "fp8 or compressed-tensors (FP4)", method);
  Fp8Quantization out;
  out.fmt = q.string("fmt", "e4m3");
  if (out.fmt != "e4m3") fail_field<UnsupportedError>(r.file(), "quantization_config.fmt", "e4m3", out.fmt);
  const std::string scheme = q.string("activation_scheme", "dynamic");
  if (scheme != "dynamic")
    fail_field<UnsupportedError>(r.file(), "quantization_config.activation_scheme", "dynamic", scheme);
  if (const json* b = q.find("weight_block_size")) {
    if (!(b->is_array() && b->size() == 2 && b->at(0) == 128 && b->at(1) == 128))
      fail_field<UnsupportedError>(r.file(), "quantization_config.weight_block_size",
                             "[128, 128] (or absent for rowwise scales)", json_excerpt(*b));
    out.weight_block_size = std::pair<int64_t, int64_t>{128, 128};
  } else {
    out.weight_block_size.reset();
  }
  out.modules_to_not_convert = string_list(q, "modules_to_not_convert");
  return out;
}

std::vector<int64_t> parse_layer_list(const Reader& r, const char* key) {
  std::vector<int64_t> out;
  const json* v = r.find(key);
  if (!v) return out;
  if (!v->is_array()) r.bad(key, "an array of layer indices", *v);
  for (const json& x : *v) {
    if (!x.is_number_integer() || x.get<int64_t>() < 0) r.bad(key, "an array of layer indices", *v);
    out.push_back(x.get<int64_t>());
  }
  return out;
}

// bos/eos_token_id: an integer or a list of integers (Llama 3.1 lists three eos ids), or null.
std::vector<int64_t> parse_token_ids(const Reader& r, const char* key) {
  const json* v = r.find(key);
  if (!v) return {};
  std::vector<int64_t> out;
  const auto one = [&](const json& x) {
    if (!x.is_number_integer() || x.get<int64_t>() < 0) r.bad(key, "a token id or a list of token ids", *v);
    out.push_back(x.get<int64_t>());
  };
  if (v->is_array()) {
    for (const json& x : *v) one(x);
  } else {
    one(*v);
  }
  return out;
}

// Keys of the four architectures whose non-default values change the math in ways fourfold does not implement.
void refuse_unimplemented(const Reader& r, ModelConfig& c, const ConfigDefaults& d) {
  for (const char* key : {"hidden_act", "hidden_activation"})
    if (r.find(key) && r.string(key) != "silu")
      fail_field<UnsupportedError>(r.file(), key, "silu (the activation of qwen3_moe, qwen3, qwen2 and llama MLPs)",
                             r.string(key));
  if (c.model_type == "llama" && r.boolean("mlp_bias", false))
    fail_field<UnsupportedError>(r.file(), "mlp_bias", "false (fourfold's MLPs have no biases)", "true");
  // Sliding-window attention: qwen3_moe applies it to every layer when use_sliding_window is set; qwen2 and
  // qwen3 to the layers that layer_types (or, without it, max_window_layers) marks "sliding_attention".
  const bool sliding = r.boolean("use_sliding_window", false);
  if (c.model_type == "qwen3_moe" && sliding)
    fail_field<UnsupportedError>(r.file(), "use_sliding_window", "false (fourfold attends over the whole context)", "true");
  if (c.model_type == "qwen2" || c.model_type == "qwen3") {
    if (const json* v = r.find("layer_types")) {
      if (!v->is_array() || static_cast<int64_t>(v->size()) != c.num_hidden_layers)
        r.bad("layer_types", fmt::format("a list of {} layer types (num_hidden_layers)", c.num_hidden_layers), *v);
      for (const json& t : *v) {
        if (t == "full_attention") continue;
        if (t == "sliding_attention")
          fail_field<UnsupportedError>(r.file(), "layer_types", "only full_attention (fourfold has no sliding window)",
                                 json_excerpt(*v));
        r.bad("layer_types", "full_attention or sliding_attention entries", *v);
      }
    } else if (sliding) {
      // transformers 5: sliding_window defaults to 4096 when use_sliding_window is set.
      const int64_t first = r.integer("max_window_layers", d.max_window_layers, 0);
      if (first < c.num_hidden_layers)
        fail_field<UnsupportedError>(r.file(), "use_sliding_window",
                               fmt::format("false, or max_window_layers >= num_hidden_layers ({}): layers {} on "
                                           "would use sliding-window attention",
                                           c.num_hidden_layers, first),
                               "true");
    }
  }
  if (c.model_type == "qwen2" && r.find("attention_bias") && !r.boolean("attention_bias", true))
    c.notes.push_back("attention_bias = false ignored: transformers' Qwen2 always has q/k/v biases");
  if (r.find("pretraining_tp") && r.integer("pretraining_tp", 1) != 1)
    c.notes.push_back("pretraining_tp ignored: it splits the same products (transformers 5 ignores it too)");
}

// Cross-key rules: heads divide, head_dim derivable, top-k within the experts.
void check_consistency(const ModelConfig& c, const Reader& r, const json& root) {
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    r.bad("num_key_value_heads", fmt::format("a divisor of num_attention_heads ({})", c.num_attention_heads),
          json(c.num_key_value_heads));
  if (c.num_experts > 0 && c.num_experts_per_tok > c.num_experts)
    r.bad("num_experts_per_tok", fmt::format("at most num_experts ({})", c.num_experts),
          json(c.num_experts_per_tok));
}


// Gated DeltaNet's sizes and each layer's mixer: layer_types when given (one entry per layer), else transformers'
// pattern of full_attention_interval (every 4th layer full attention).
void parse_hybrid(const Reader& r, ModelConfig& c, Defaults& d) {
  const auto size = [&](const char* key, int64_t fallback, int64_t max = kMaxConfigInteger) {
    const int64_t v = r.integer(key, d.take(r, key, fallback));
    if (v > max) r.bad(key, fmt::format("an integer in [1, {}]", max), json(v));
    return v;
  };
  // layer_types is one entry per layer: a bound before it is built (a real hybrid has tens of layers).
  constexpr int64_t kMaxHybridLayers = 4096;
  if (c.num_hidden_layers > kMaxHybridLayers)
    r.bad("num_hidden_layers", fmt::format("at most {} layers in a hybrid", kMaxHybridLayers), json(c.num_hidden_layers));
  LinearAttentionConfig& l = c.linear;
  // A short convolution: transformers' models use 4 taps; the bound keeps a conv state small.
  l.conv_kernel = size("linear_conv_kernel_dim", 4, 64);
  l.key_head_dim = size("linear_key_head_dim", 128);
  l.value_head_dim = size("linear_value_head_dim", 128);
  l.num_key_heads = size("linear_num_key_heads", 16);
  l.num_value_heads = size("linear_num_value_heads", 32);
  if (l.num_value_heads % l.num_key_heads != 0)
    r.bad("linear_num_value_heads", fmt::format("a multiple of linear_num_key_heads ({})", l.num_key_heads),
          json(l.num_value_heads));
  c.layer_types.clear();
  if (const json* v = r.find("layer_types")) {
    if (!v->is_array() || static_cast<int64_t>(v->size()) != c.num_hidden_layers)
      r.bad("layer_types", fmt::format("a list of {} layer types (num_hidden_layers)", c.num_hidden_layers), *v);
    for (const json& t : *v) {
      if (t == "linear_attention") c.layer_types.push_back(LayerType::linear_attention);
      else if (t == "full_attention") c.layer_types.push_back(LayerType::full_attention);
      else r.bad("layer_types", "linear_attention or full_attention entries", *v);
    }
  } else {
    const int64_t interval = r.integer("full_attention_interval", d.take(r, "full_attention_interval", int64_t{4}));
    for (int64_t i = 0; i < c.num_hidden_layers; ++i)
      c.layer_types.push_back((i + 1) % interval != 0 ? LayerType::linear_attention : LayerType::full_attention);
  }
  if (c.attention_bias)
    fail_field<UnsupportedError>(r.file(), r.path("attention_bias"), "false (the hybrids' projections have no biases)", "true");
}

// The sparse MoE keys of qwen3_moe and the hybrids that have experts.
void parse_moe(const Reader& r, ModelConfig& c, Defaults& d, const ConfigDefaults& td) {
  const auto integer = [&](const char* key, int64_t fallback) { return r.integer(key, d.take(r, key, fallback)); };
  // transformers 5 writes num_local_experts (num_experts is its attribute alias); 4.x wrote num_experts.
  const char* experts = either_spelling(r, "num_local_experts", "num_experts");
  c.num_experts = experts ? r.integer(experts) : d.take(r, "num_local_experts", td.num_experts);
  c.num_experts_per_tok = integer("num_experts_per_tok", td.num_experts_per_tok);
  c.moe_intermediate_size = integer("moe_intermediate_size", td.moe_intermediate_size);
  if (c.model_type == "qwen3_5_moe_text") {   // every layer sparse, the top-k always renormalized
    c.norm_topk_prob = true;
  } else {
    c.norm_topk_prob = r.boolean("norm_topk_prob", d.take(r, "norm_topk_prob", td.norm_topk_prob));
    c.decoder_sparse_step = integer("decoder_sparse_step", td.decoder_sparse_step);
    c.mlp_only_layers = parse_layer_list(r, "mlp_only_layers");
  }
  if (td.shared_expert_intermediate_size > 0)
    c.shared_expert_intermediate_size = integer("shared_expert_intermediate_size", td.shared_expert_intermediate_size);
}

// A decoder's keys from one JSON object (config.json itself, or a multimodal folder's text_config).
void parse_decoder(const Reader& r, const json& root, ModelConfig& c) {
  const std::optional<ConfigDefaults> found = transformers_defaults(c.model_type);
  if (!found) fail_field<FormatError>(r.file(), r.path("model_type"), kModelTypes, c.model_type);
  const ConfigDefaults& td = *found;
  Defaults d(c.defaults_taken);
  const auto integer = [&](const char* key, int64_t fallback) { return r.integer(key, d.take(r, key, fallback)); };
  c.hidden_size = integer("hidden_size", td.hidden_size);
  // qwen3_5_moe_text has no dense MLP, so no intermediate_size.
  if (td.intermediate_size > 0) c.intermediate_size = integer("intermediate_size", td.intermediate_size);
  c.num_hidden_layers = integer("num_hidden_layers", td.num_hidden_layers);
  c.num_attention_heads = integer("num_attention_heads", td.num_attention_heads);
  c.num_key_value_heads = integer("num_key_value_heads", td.num_key_value_heads.value_or(c.num_attention_heads));
  if (r.find("head_dim")) {
    c.head_dim = r.integer("head_dim");
  } else if (td.head_dim) {
    c.head_dim = d.take(r, "head_dim", *td.head_dim);
  } else {
    if (c.hidden_size % c.num_attention_heads != 0)
      r.bad("head_dim", "present, or hidden_size divisible by num_attention_heads", json(c.hidden_size));
    c.head_dim = c.hidden_size / c.num_attention_heads;
    c.defaults_taken.push_back(fmt::format("head_dim = {} (hidden_size / num_attention_heads)", c.head_dim));
  }
  c.vocab_size = integer("vocab_size", td.vocab_size);
  c.max_position_embeddings = integer("max_position_embeddings", td.max_position_embeddings);
  c.rms_norm_eps = r.positive("rms_norm_eps", d.take(r, "rms_norm_eps", kDefaultRmsNormEps));
  parse_rope(r, c, d);
  c.tie_word_embeddings = r.boolean("tie_word_embeddings", d.take(r, "tie_word_embeddings", false));
  // Qwen2 always has q/k/v biases (its config has no key for them); the others default to none.
  c.attention_bias = c.model_type == "qwen2" || r.boolean("attention_bias", d.take(r, "attention_bias", false));
  parse_torch_dtype(r, c);
  const std::vector<int64_t> bos = parse_token_ids(r, "bos_token_id");
  if (bos.size() > 1) r.bad("bos_token_id", "one token id", *r.find("bos_token_id"));
  c.bos_token_id = bos.empty() ? std::nullopt : std::optional<int64_t>(bos[0]);
  c.eos_token_ids = parse_token_ids(r, "eos_token_id");
  // Only an absent key takes the default: "eos_token_id": null says there is none.
  if (!root.contains("bos_token_id") && td.bos_token_id) c.bos_token_id = d.take(r, "bos_token_id", *td.bos_token_id);
  if (!root.contains("eos_token_id") && td.eos_token_id) c.eos_token_ids = {d.take(r, "eos_token_id", *td.eos_token_id)};
  if (c.model_type == "qwen3_moe" || c.model_type == "qwen3_5_moe_text" || c.model_type == "qwen3_next")
    parse_moe(r, c, d, td);
  if (c.is_hybrid()) parse_hybrid(r, c, d);
  refuse_unimplemented(r, c, td);
  c.quantization = parse_quantization(r, c);
  check_consistency(c, r, root);
}

}  // namespace

ModelConfig parse_model_config(std::string_view json_text, const std::string& file_name) {
  const json root = parse_bounded_json(json_text, file_name, "config.json");
  if (!root.is_object()) CheckedJson(file_name).bad("", "a JSON object", root);
  const Reader top(root, file_name);
  ModelConfig c;
  c.model_type = top.string("model_type");
  if (c.model_type != "qwen3_5_moe" && c.model_type != "qwen3_5") {
    parse_decoder(top, root, c);
    return c;
  }
  // A multimodal folder (Qwen3.5 / 3.6 as released): the decoder is its text_config, its tensors under
  // model.language_model.; the vision tower (model.visual.*) is not read.
  const json& text = top.require("text_config");
  if (!text.is_object()) top.bad("text_config", "an object", text);
  const Reader r(text, file_name, "text_config");
  c.wrapper = c.model_type;
  c.model_type = r.string("model_type", c.wrapper + "_text");
  if (c.model_type != c.wrapper + "_text") r.bad("model_type", c.wrapper + "_text", json(c.model_type));
  parse_decoder(r, text, c);
  // The wrapper states what its text_config may leave out: the dtype and the tied embeddings.
  if (!c.torch_dtype_stated) parse_torch_dtype(top, c);
  if (!text.contains("tie_word_embeddings") && top.find("tie_word_embeddings"))
    c.tie_word_embeddings = top.boolean("tie_word_embeddings", false);
  if (!c.quantization && !c.fp4) c.quantization = parse_quantization(top, c);
  return c;
}

std::string model_config_to_json(const ModelConfig& c) {
  static const std::map<std::string, std::string> kArchitecture = {{"qwen3_moe", "Qwen3MoeForCausalLM"},
                                                                     {"qwen3", "Qwen3ForCausalLM"},
                                                                     {"qwen2", "Qwen2ForCausalLM"},
                                                                     {"llama", "LlamaForCausalLM"},
                                                                     {"qwen3_5_moe_text", "Qwen3_5MoeForCausalLM"},
                                                                     {"qwen3_5_text", "Qwen3_5ForCausalLM"},
                                                                     {"qwen3_next", "Qwen3NextForCausalLM"}};
  nlohmann::ordered_json j;
  const auto arch = kArchitecture.find(c.model_type);
  if (arch != kArchitecture.end()) j["architectures"] = {arch->second};
  j["model_type"] = c.model_type;
  j["hidden_size"] = c.hidden_size;
  if (c.intermediate_size > 0) j["intermediate_size"] = c.intermediate_size;
  j["num_hidden_layers"] = c.num_hidden_layers;
  j["num_attention_heads"] = c.num_attention_heads;
  j["num_key_value_heads"] = c.num_key_value_heads;
  j["head_dim"] = c.head_dim;
  j["vocab_size"] = c.vocab_size;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["rms_norm_eps"] = c.rms_norm_eps;
  if (c.is_hybrid()) {   // transformers 5's spelling, the partial rotary inside
    j["rope_parameters"] = {{"rope_type", "default"},
                            {"rope_theta", c.rope_theta},
                            {"partial_rotary_factor", c.partial_rotary_factor}};
  } else if (c.rope_scaling && c.rope_scaling->rope_type == "linear") {
    j["rope_theta"] = c.rope_theta;
    j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", c.rope_scaling->factor}};
  } else if (c.rope_scaling) {
    j["rope_theta"] = c.rope_theta;
    j["rope_scaling"] = {{"rope_type", c.rope_scaling->rope_type},
                         {"factor", c.rope_scaling->factor},
                         {"low_freq_factor", c.rope_scaling->low_freq_factor},
                         {"high_freq_factor", c.rope_scaling->high_freq_factor},
                         {"original_max_position_embeddings", c.rope_scaling->original_max_position_embeddings}};
  } else {
    j["rope_theta"] = c.rope_theta;
    j["rope_scaling"] = nullptr;
  }
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  j["attention_bias"] = c.attention_bias;
  j["hidden_act"] = "silu";
  if (c.torch_dtype_stated) j["torch_dtype"] = std::string(dtype_name(c.torch_dtype));
  j["bos_token_id"] = c.bos_token_id ? nlohmann::ordered_json(*c.bos_token_id) : nlohmann::ordered_json(nullptr);
  if (c.eos_token_ids.size() == 1) j["eos_token_id"] = c.eos_token_ids[0];
  else if (c.eos_token_ids.empty()) j["eos_token_id"] = nullptr;
  else j["eos_token_id"] = c.eos_token_ids;
  if (c.num_experts > 0) {
    j["num_experts"] = c.num_experts;
    j["num_experts_per_tok"] = c.num_experts_per_tok;
    j["moe_intermediate_size"] = c.moe_intermediate_size;
    if (c.shared_expert_intermediate_size > 0) j["shared_expert_intermediate_size"] = c.shared_expert_intermediate_size;
    if (c.model_type != "qwen3_5_moe_text") {   // it has no such keys: every layer sparse, top-k renormalized
      j["norm_topk_prob"] = c.norm_topk_prob;
      j["decoder_sparse_step"] = c.decoder_sparse_step;
      j["mlp_only_layers"] = c.mlp_only_layers;
    }
  }
  if (c.is_hybrid()) {
    nlohmann::ordered_json types = nlohmann::ordered_json::array();
    for (LayerType t : c.layer_types) types.push_back(t == LayerType::linear_attention ? "linear_attention" : "full_attention");
    j["layer_types"] = types;
    j["linear_conv_kernel_dim"] = c.linear.conv_kernel;
    j["linear_key_head_dim"] = c.linear.key_head_dim;
    j["linear_value_head_dim"] = c.linear.value_head_dim;
    j["linear_num_key_heads"] = c.linear.num_key_heads;
    j["linear_num_value_heads"] = c.linear.num_value_heads;
  }
  if (c.quantization) {
    nlohmann::ordered_json q;
    q["quant_method"] = "fp8";
    q["fmt"] = c.quantization->fmt;
    q["activation_scheme"] = "dynamic";
    if (c.quantization->weight_block_size)
      q["weight_block_size"] = {c.quantization->weight_block_size->first, c.quantization->weight_block_size->second};
    q["modules_to_not_convert"] = c.quantization->modules_to_not_convert;
    j["quantization_config"] = q;
  }
  if (c.fp4) {
    nlohmann::ordered_json q;
    q["quant_method"] = "compressed-tensors";
    q["format"] = c.fp4->format();
    q["quantization_status"] = "compressed";
    nlohmann::ordered_json weights;
    weights["num_bits"] = 4;
    weights["type"] = "float";
    weights["symmetric"] = true;
    weights["dynamic"] = false;
    weights["strategy"] = c.fp4->nv ? "tensor_group" : "group";
    weights["group_size"] = c.fp4->block();
    if (!c.fp4->nv) weights["scale_dtype"] = "torch.uint8";
    q["config_groups"] = {{"group_0", {{"targets", c.fp4->targets}, {"weights", weights}, {"input_activations", nullptr}}}};
    q["ignore"] = c.fp4->ignore;
    j["quantization_config"] = q;
  }
  return j.dump(2) + "\n";
}

}  // namespace fourfold::model
