// config.json <-> ModelConfig. Self-contained (nlohmann_json, errors, dtype names) so that the fuzz build
// (scripts/fuzz.sh) can compile it without the rest of the library. Every error names the file and the key.
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fourfold/errors.h"
#include "model/json_excerpt.h"
#include "model/model_config.h"

namespace fourfold::model {
namespace {

using nlohmann::json;

constexpr const char* kModelTypes = "one of qwen3_moe, qwen3, qwen2, llama";

// Reads the keys of one JSON object, each failure naming `file` and the key's path ("rope_scaling.factor").
class Reader {
 public:
  Reader(const json& object, std::string file, std::string prefix = "")
      : object_(object), file_(std::move(file)), prefix_(std::move(prefix)) {}

  // nullptr when absent or null (Hugging Face writes "rope_scaling": null for "none").
  const json* find(const char* key) const {
    const auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  const json& require(const char* key) const {
    if (const json* v = find(key)) return *v;
    fail<FormatError>(file_, path(key), "the key to be present", "it missing");
  }
  [[noreturn]] void bad(const char* key, std::string_view expected, const json& found) const {
    fail<FormatError>(file_, path(key), expected, json_excerpt(found));
  }

  int64_t integer(const char* key, std::optional<int64_t> fallback = std::nullopt, int64_t min = 1) const {
    const json* v = find(key);
    if (!v) {
      if (fallback) return *fallback;
      require(key);
    }
    if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX)))
      bad(key, "an integer", *v);
    const int64_t value = v->get<int64_t>();
    if (value < min) bad(key, fmt::format("an integer >= {}", min), *v);
    return value;
  }
  double number(const char* key, std::optional<double> fallback = std::nullopt) const {
    const json* v = find(key);
    if (!v) {
      if (fallback) return *fallback;
      require(key);
    }
    if (!v->is_number() || !std::isfinite(v->get<double>())) bad(key, "a finite number", *v);
    return v->get<double>();
  }
  double positive(const char* key, std::optional<double> fallback = std::nullopt) const {
    const double value = number(key, fallback);
    if (!(value > 0)) bad(key, "a positive number", value);
    return value;
  }
  bool boolean(const char* key, bool fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) bad(key, "true or false", *v);
    return v->get<bool>();
  }
  std::string string(const char* key, std::optional<std::string> fallback = std::nullopt) const {
    const json* v = find(key);
    if (!v) {
      if (fallback) return *fallback;
      require(key);
    }
    if (!v->is_string()) bad(key, "a string", *v);
    return v->get<std::string>();
  }
  std::string path(const char* key) const { return prefix_.empty() ? key : prefix_ + "." + key; }
  const std::string& file() const { return file_; }

 private:
  const json& object_;
  std::string file_;
  std::string prefix_;
};

// Recent transformers write "dtype" where older ones wrote "torch_dtype"; either is read.
DType parse_torch_dtype(const Reader& r) {
  const char* key = r.find("torch_dtype") || !r.find("dtype") ? "torch_dtype" : "dtype";
  const std::string name = r.string(key, "bfloat16");
  if (name == "bfloat16") return DType::bf16;
  if (name == "float16") return DType::f16;
  if (name == "float32") return DType::f32;
  r.bad(key, "one of bfloat16, float16, float32", name);
}

std::optional<RopeScaling> parse_rope_scaling(const Reader& r) {
  const json* v = r.find("rope_scaling");
  if (!v) return std::nullopt;
  if (!v->is_object()) r.bad("rope_scaling", "an object or null", *v);
  const Reader s(*v, r.file(), "rope_scaling");
  // Older configs spell rope_type as "type".
  const std::string type = s.find("rope_type") ? s.string("rope_type") : s.string("type", "default");
  if (type == "default") return std::nullopt;
  if (type != "llama3")
    fail<UnsupportedError>(r.file(), "rope_scaling.rope_type", "llama3 (the only rope scaling fourfold implements)",
                           type);
  RopeScaling rs;
  rs.rope_type = type;
  rs.factor = s.positive("factor");
  rs.low_freq_factor = s.positive("low_freq_factor");
  rs.high_freq_factor = s.positive("high_freq_factor");
  rs.original_max_position_embeddings = s.integer("original_max_position_embeddings");
  if (!(rs.high_freq_factor > rs.low_freq_factor))
    s.bad("high_freq_factor", "a value above low_freq_factor", *v->find("high_freq_factor"));
  return rs;
}

std::optional<Fp8Quantization> parse_quantization(const Reader& r) {
  const json* v = r.find("quantization_config");
  if (!v) return std::nullopt;
  if (!v->is_object()) r.bad("quantization_config", "an object or null", *v);
  const Reader q(*v, r.file(), "quantization_config");
  const std::string method = q.string("quant_method");
  if (method != "fp8")
    fail<UnsupportedError>(r.file(), "quantization_config.quant_method", "fp8", method);
  Fp8Quantization out;
  out.fmt = q.string("fmt", "e4m3");
  if (out.fmt != "e4m3") fail<UnsupportedError>(r.file(), "quantization_config.fmt", "e4m3", out.fmt);
  const std::string scheme = q.string("activation_scheme", "dynamic");
  if (scheme != "dynamic")
    fail<UnsupportedError>(r.file(), "quantization_config.activation_scheme", "dynamic", scheme);
  if (const json* b = q.find("weight_block_size")) {
    if (!(b->is_array() && b->size() == 2 && b->at(0) == 128 && b->at(1) == 128))
      fail<UnsupportedError>(r.file(), "quantization_config.weight_block_size",
                             "[128, 128] (or absent for rowwise scales)", json_excerpt(*b));
    out.weight_block_size = std::pair<int64_t, int64_t>{128, 128};
  } else {
    out.weight_block_size.reset();
  }
  if (const json* m = q.find("modules_to_not_convert")) {
    if (!m->is_array()) q.bad("modules_to_not_convert", "an array of strings", *m);
    for (const json& name : *m) {
      if (!name.is_string()) q.bad("modules_to_not_convert", "an array of strings", *m);
      out.modules_to_not_convert.push_back(name.get<std::string>());
    }
  }
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

// Cross-key rules: heads divide, head_dim derivable, top-k within the experts.
void check_consistency(const ModelConfig& c, const Reader& r, const json& root) {
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    r.bad("num_key_value_heads", fmt::format("a divisor of num_attention_heads ({})", c.num_attention_heads),
          root.at("num_key_value_heads"));
  if (c.num_experts > 0 && c.num_experts_per_tok > c.num_experts)
    r.bad("num_experts_per_tok", fmt::format("at most num_experts ({})", c.num_experts),
          root.at("num_experts_per_tok"));
}

}  // namespace

ModelConfig parse_model_config(std::string_view json_text, const std::string& file_name) {
  json root;
  try {
    root = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {
    fail<FormatError>(file_name, "config.json", "valid JSON", e.what());
  }
  if (!root.is_object()) fail<FormatError>(file_name, "config.json", "a JSON object", json_excerpt(root));
  const Reader r(root, file_name);

  ModelConfig c;
  c.model_type = r.string("model_type");
  if (c.model_type != "qwen3_moe" && c.model_type != "qwen3" && c.model_type != "qwen2" && c.model_type != "llama")
    fail<FormatError>(file_name, "model_type", kModelTypes, c.model_type);
  c.hidden_size = r.integer("hidden_size");
  c.intermediate_size = r.integer("intermediate_size");
  c.num_hidden_layers = r.integer("num_hidden_layers");
  c.num_attention_heads = r.integer("num_attention_heads");
  c.num_key_value_heads = r.integer("num_key_value_heads", c.num_attention_heads);
  if (r.find("head_dim")) {
    c.head_dim = r.integer("head_dim");
  } else {
    if (c.hidden_size % c.num_attention_heads != 0)
      r.bad("head_dim", "present, or hidden_size divisible by num_attention_heads", root.at("hidden_size"));
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  c.vocab_size = r.integer("vocab_size");
  c.max_position_embeddings = r.integer("max_position_embeddings", 2048);
  c.rms_norm_eps = r.positive("rms_norm_eps", 1e-6);
  c.rope_theta = r.positive("rope_theta", 10000.0);
  c.rope_scaling = parse_rope_scaling(r);
  c.tie_word_embeddings = r.boolean("tie_word_embeddings", false);
  // Qwen2 always has q/k/v biases (its config has no key for them); the others default to none.
  c.attention_bias = r.boolean("attention_bias", c.model_type == "qwen2");
  c.torch_dtype = parse_torch_dtype(r);
  if (c.model_type == "qwen3_moe") {
    c.num_experts = r.integer("num_experts");
    c.num_experts_per_tok = r.integer("num_experts_per_tok");
    c.moe_intermediate_size = r.integer("moe_intermediate_size");
    c.norm_topk_prob = r.boolean("norm_topk_prob", false);   // transformers' Qwen3MoeConfig default
    c.decoder_sparse_step = r.integer("decoder_sparse_step", 1);
    c.mlp_only_layers = parse_layer_list(r, "mlp_only_layers");
  }
  c.quantization = parse_quantization(r);
  check_consistency(c, r, root);
  return c;
}

std::string model_config_to_json(const ModelConfig& c) {
  static const std::map<std::string, std::string> kArchitecture = {{"qwen3_moe", "Qwen3MoeForCausalLM"},
                                                                     {"qwen3", "Qwen3ForCausalLM"},
                                                                     {"qwen2", "Qwen2ForCausalLM"},
                                                                     {"llama", "LlamaForCausalLM"}};
  nlohmann::ordered_json j;
  const auto arch = kArchitecture.find(c.model_type);
  if (arch != kArchitecture.end()) j["architectures"] = {arch->second};
  j["model_type"] = c.model_type;
  j["hidden_size"] = c.hidden_size;
  j["intermediate_size"] = c.intermediate_size;
  j["num_hidden_layers"] = c.num_hidden_layers;
  j["num_attention_heads"] = c.num_attention_heads;
  j["num_key_value_heads"] = c.num_key_value_heads;
  j["head_dim"] = c.head_dim;
  j["vocab_size"] = c.vocab_size;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["rms_norm_eps"] = c.rms_norm_eps;
  j["rope_theta"] = c.rope_theta;
  if (c.rope_scaling) {
    j["rope_scaling"] = {{"rope_type", c.rope_scaling->rope_type},
                         {"factor", c.rope_scaling->factor},
                         {"low_freq_factor", c.rope_scaling->low_freq_factor},
                         {"high_freq_factor", c.rope_scaling->high_freq_factor},
                         {"original_max_position_embeddings", c.rope_scaling->original_max_position_embeddings}};
  } else {
    j["rope_scaling"] = nullptr;
  }
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  j["attention_bias"] = c.attention_bias;
  j["hidden_act"] = "silu";
  j["torch_dtype"] = std::string(dtype_name(c.torch_dtype));
  if (c.model_type == "qwen3_moe") {
    j["num_experts"] = c.num_experts;
    j["num_experts_per_tok"] = c.num_experts_per_tok;
    j["moe_intermediate_size"] = c.moe_intermediate_size;
    j["norm_topk_prob"] = c.norm_topk_prob;
    j["decoder_sparse_step"] = c.decoder_sparse_step;
    j["mlp_only_layers"] = c.mlp_only_layers;
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
  return j.dump(2) + "\n";
}

}  // namespace fourfold::model
