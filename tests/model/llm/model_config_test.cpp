// config.json: every preset round-trips, real Hugging Face spellings parse, each bad config names file and key.
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/llm/model_config.h"
#include "model/llm/presets.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

using fourfold::testing::throws_with;
using nlohmann::json;

void expect_same(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.model_type, b.model_type);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.num_hidden_layers, b.num_hidden_layers);
  EXPECT_EQ(a.num_attention_heads, b.num_attention_heads);
  EXPECT_EQ(a.num_key_value_heads, b.num_key_value_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.max_position_embeddings, b.max_position_embeddings);
  EXPECT_EQ(a.rms_norm_eps, b.rms_norm_eps);
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  ASSERT_EQ(a.rope_scaling.has_value(), b.rope_scaling.has_value());
  if (a.rope_scaling) {
    EXPECT_EQ(a.rope_scaling->factor, b.rope_scaling->factor);
    EXPECT_EQ(a.rope_scaling->low_freq_factor, b.rope_scaling->low_freq_factor);
    EXPECT_EQ(a.rope_scaling->high_freq_factor, b.rope_scaling->high_freq_factor);
    EXPECT_EQ(a.rope_scaling->original_max_position_embeddings, b.rope_scaling->original_max_position_embeddings);
  }
  EXPECT_EQ(a.tie_word_embeddings, b.tie_word_embeddings);
  EXPECT_EQ(a.attention_bias, b.attention_bias);
  EXPECT_EQ(a.torch_dtype, b.torch_dtype);
  EXPECT_EQ(a.num_experts, b.num_experts);
  EXPECT_EQ(a.num_experts_per_tok, b.num_experts_per_tok);
  EXPECT_EQ(a.moe_intermediate_size, b.moe_intermediate_size);
  if (a.num_experts > 0) {
    EXPECT_EQ(a.norm_topk_prob, b.norm_topk_prob);
  }
  EXPECT_EQ(a.decoder_sparse_step, b.decoder_sparse_step);
  EXPECT_EQ(a.mlp_only_layers, b.mlp_only_layers);
  ASSERT_EQ(a.quantization.has_value(), b.quantization.has_value());
  if (a.quantization) {
    EXPECT_EQ(a.quantization->fmt, b.quantization->fmt);
    EXPECT_EQ(a.quantization->weight_block_size, b.quantization->weight_block_size);
    EXPECT_EQ(a.quantization->modules_to_not_convert, b.quantization->modules_to_not_convert);
  }
}

TEST(ModelConfig, EveryPresetRoundTrips) {
  for (const std::string& name : preset_names()) {
    SCOPED_TRACE(name);
    const ModelConfig c = preset_config(name);
    expect_same(parse_model_config(model_config_to_json(c), "config.json"), c);
  }
}

TEST(ModelConfig, QuantizationAndOptionalFieldsRoundTrip) {
  ModelConfig c = preset_config("tiny-moe");
  c.mlp_only_layers = {1};
  c.decoder_sparse_step = 2;
  c.norm_topk_prob = false;
  c.torch_dtype = DType::f16;
  c.quantization = Fp8Quantization{};
  c.quantization->modules_to_not_convert = {"lm_head", "model.layers.0.mlp.gate"};
  expect_same(parse_model_config(model_config_to_json(c), "config.json"), c);
  ModelConfig q2 = preset_config("tiny-qwen3");
  q2.model_type = "qwen2";
  q2.attention_bias = true;
  q2.quantization = Fp8Quantization{};
  q2.quantization->weight_block_size.reset();   // rowwise
  expect_same(parse_model_config(model_config_to_json(q2), "config.json"), q2);
}

// Trimmed from Qwen/Qwen3-30B-A3B-FP8's config.json, with the nulls and extra keys real configs carry.
TEST(ModelConfig, ParsesARealQwen3MoeFp8Config) {
  const char* text = R"({
    "architectures": ["Qwen3MoeForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 151643, "decoder_sparse_step": 1, "eos_token_id": 151645, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 6144,
    "max_position_embeddings": 40960, "max_window_layers": 48, "mlp_only_layers": [], "model_type": "qwen3_moe",
    "moe_intermediate_size": 768, "norm_topk_prob": true, "num_attention_heads": 32, "num_experts": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 48, "num_key_value_heads": 4, "output_router_logits": false,
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                            "weight_block_size": [128, 128], "modules_to_not_convert": ["lm_head"]},
    "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001,
    "sliding_window": null, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 151936})";
  const ModelConfig c = parse_model_config(text, "config.json");
  EXPECT_EQ(c.model_type, "qwen3_moe");
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.num_experts, 128);
  EXPECT_EQ(c.num_experts_per_tok, 8);
  EXPECT_EQ(c.moe_intermediate_size, 768);
  EXPECT_EQ(c.vocab_size, 151936);
  ASSERT_TRUE(c.quantization.has_value());
  EXPECT_EQ(c.quantization->weight_block_size, (std::pair<int64_t, int64_t>{128, 128}));
}

TEST(ModelConfig, DefaultsFollowTransformers) {
  const ModelConfig c = parse_model_config(
      R"({"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1,
          "num_attention_heads": 4, "vocab_size": 10, "num_key_value_heads": 4})",
      "config.json");
  EXPECT_EQ(c.head_dim, 16);              // hidden / heads
  EXPECT_TRUE(c.attention_bias);          // qwen2 always has q/k/v biases
  EXPECT_FALSE(c.has_o_bias());
  EXPECT_FALSE(c.torch_dtype_stated);     // the loader takes the weights' dtype
  EXPECT_FALSE(c.rope_scaling.has_value());
  EXPECT_EQ(c.max_position_embeddings, 32768);
  json j = json::parse(model_config_to_json(c));
  j["dtype"] = "float32";   // transformers 5's spelling
  EXPECT_EQ(parse_model_config(j.dump(), "config.json").torch_dtype, DType::f32);
  EXPECT_FALSE(c.quantization.has_value());
}

// transformers 5.23's field defaults per model_type: an absent key means them, and the reader says it took them.
TEST(ModelConfig, AbsentKeysTakeTransformersDefaultsAndSaySo) {
  const auto has = [](const ModelConfig& c, const std::string& entry) {
    return std::find(c.defaults_taken.begin(), c.defaults_taken.end(), entry) != c.defaults_taken.end();
  };
  const ModelConfig moe = parse_model_config(R"({"model_type": "qwen3_moe"})", "config.json");
  EXPECT_EQ(moe.hidden_size, 2048);
  EXPECT_EQ(moe.num_key_value_heads, 4);
  EXPECT_EQ(moe.head_dim, 64);   // Qwen3MoeConfig has no head_dim: hidden / heads
  EXPECT_EQ(moe.num_experts, 128);
  EXPECT_EQ(moe.num_experts_per_tok, 8);
  EXPECT_EQ(moe.moe_intermediate_size, 768);
  EXPECT_FALSE(moe.norm_topk_prob);
  EXPECT_EQ(moe.vocab_size, 151936);
  EXPECT_TRUE(has(moe, "num_local_experts = 128"));
  EXPECT_TRUE(has(moe, "rope_theta = 10000"));
  const ModelConfig qwen3 = parse_model_config(R"({"model_type": "qwen3", "hidden_size": 256})", "config.json");
  EXPECT_EQ(qwen3.head_dim, 128);   // Qwen3Config's own default, not hidden / heads
  EXPECT_EQ(qwen3.num_key_value_heads, 32);
  EXPECT_TRUE(has(qwen3, "head_dim = 128"));
  EXPECT_FALSE(has(qwen3, "hidden_size = 4096"));
  const ModelConfig llama = parse_model_config(R"({"model_type": "llama", "num_attention_heads": 8})", "config.json");
  EXPECT_EQ(llama.num_key_value_heads, 8);   // = heads
  EXPECT_EQ(llama.head_dim, 512);            // 4096 / 8
  EXPECT_EQ(llama.max_position_embeddings, 2048);
  EXPECT_EQ(llama.bos_token_id, 1);
  EXPECT_EQ(llama.eos_token_ids, std::vector<int64_t>{2});
  EXPECT_TRUE(has(llama, "eos_token_id = 2"));
  // An explicit null is not an absent key: no eos.
  EXPECT_TRUE(parse_model_config(R"({"model_type": "llama", "eos_token_id": null})", "c").eos_token_ids.empty());
  EXPECT_EQ(parse_model_config(R"({"model_type": "llama", "eos_token_id": [5, 7]})", "c").eos_token_ids,
            (std::vector<int64_t>{5, 7}));
}

// transformers 4.x and 5.x spellings of the keys it renamed read to the same configuration.
TEST(ModelConfig, BothSpellingsOfRenamedKeys) {
  const ModelConfig v5 = parse_model_config(
      R"({"model_type": "qwen3_moe", "num_local_experts": 16, "dtype": "float16",
          "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}})", "c");
  const ModelConfig v4 = parse_model_config(
      R"({"model_type": "qwen3_moe", "num_experts": 16, "torch_dtype": "float16",
          "rope_theta": 1000000.0, "rope_scaling": null})", "c");
  EXPECT_EQ(model_config_to_json(v4), model_config_to_json(v5));
  EXPECT_EQ(v5.num_experts, 16);
  EXPECT_EQ(v5.rope_theta, 1e6);
  EXPECT_EQ(v5.torch_dtype, DType::f16);
  const ModelConfig l5 = parse_model_config(
      R"({"model_type": "llama", "max_position_embeddings": 4096, "rope_parameters": {"rope_type": "llama3",
          "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}})", "c");
  const ModelConfig l4 = parse_model_config(
      R"({"model_type": "llama", "max_position_embeddings": 4096, "rope_theta": 500000.0, "rope_scaling":
          {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}})", "c");
  EXPECT_EQ(model_config_to_json(l4), model_config_to_json(l5));
  ASSERT_TRUE(l5.rope_scaling.has_value());
  EXPECT_EQ(l5.rope_theta, 500000.0);
  EXPECT_EQ(l5.rope_scaling->original_max_position_embeddings, 4096);   // transformers: max_position_embeddings
  // A top-level rope_theta beside rope_parameters without one (transformers moves it in).
  EXPECT_EQ(parse_model_config(R"({"model_type": "qwen3", "rope_theta": 5e5, "rope_parameters":
                                   {"rope_type": "default"}})", "c").rope_theta, 5e5);
  // Linear scaling is implemented.
  const ModelConfig lin = parse_model_config(
      R"({"model_type": "llama", "rope_parameters": {"rope_type": "linear", "factor": 2.0}})", "c");
  ASSERT_TRUE(lin.rope_scaling.has_value());
  EXPECT_EQ(lin.rope_scaling->rope_type, "linear");
  EXPECT_EQ(parse_model_config(model_config_to_json(lin), "c").rope_scaling->factor, 2.0);
  // Both spellings present and contradicting each other.
  EXPECT_TRUE(throws_with<FormatError>(
      [] { parse_model_config(R"({"model_type": "qwen3_moe", "num_experts": 8, "num_local_experts": 16})", "c"); },
      {"num_experts", "num_local_experts", "16"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [] { parse_model_config(R"({"model_type": "qwen3", "dtype": "float32", "torch_dtype": "bfloat16"})", "c"); },
      {"torch_dtype", "dtype"}));
}

// A key that changes the math in a way fourfold does not implement is an error naming it, never a default.
TEST(ModelConfig, KeysThatChangeTheMathAndAreNotImplementedAreRefused) {
  const auto refused = [](const char* text, std::vector<std::string> fragments) {
    fragments.push_back("my/config.json");
    return throws_with<UnsupportedError>([&] { parse_model_config(text, "my/config.json"); }, fragments);
  };
  EXPECT_TRUE(refused(R"({"model_type": "llama", "rope_parameters": {"rope_type": "yarn", "factor": 4.0}})",
                      {"rope_parameters.rope_type", "yarn"}));
  EXPECT_TRUE(refused(R"({"model_type": "qwen3", "rope_parameters": {"rope_type": "dynamic", "factor": 2.0}})",
                      {"rope_parameters.rope_type", "dynamic"}));
  EXPECT_TRUE(refused(R"({"model_type": "llama", "rope_parameters": {"rope_type": "default",
                          "partial_rotary_factor": 0.5}})", {"partial_rotary_factor", "0.5"}));
  EXPECT_TRUE(refused(R"({"model_type": "qwen3", "rope_parameters": {"full_attention": {"rope_type": "default"}}})",
                      {"rope_parameters.full_attention"}));
  EXPECT_TRUE(refused(R"({"model_type": "llama", "hidden_act": "gelu"})", {"hidden_act", "silu", "gelu"}));
  EXPECT_TRUE(refused(R"({"model_type": "llama", "mlp_bias": true})", {"mlp_bias"}));
  EXPECT_TRUE(refused(R"({"model_type": "qwen3_moe", "use_sliding_window": true})", {"use_sliding_window"}));
  EXPECT_TRUE(refused(R"({"model_type": "qwen2", "num_hidden_layers": 2,
                          "layer_types": ["full_attention", "sliding_attention"]})", {"layer_types"}));
  EXPECT_TRUE(refused(R"({"model_type": "qwen3", "num_hidden_layers": 32, "use_sliding_window": true,
                          "sliding_window": 4096, "max_window_layers": 28})", {"use_sliding_window", "28"}));
  // Sliding windows that transformers itself does not apply are accepted.
  EXPECT_NO_THROW(parse_model_config(R"({"model_type": "qwen3", "num_hidden_layers": 4, "use_sliding_window": true,
                                         "max_window_layers": 4})", "c"));
  EXPECT_NO_THROW(parse_model_config(R"({"model_type": "qwen2", "use_sliding_window": false,
                                         "sliding_window": 131072})", "c"));
  // Attention biases: q/k/v/o for llama and qwen3 (implemented), ignored-with-a-note for qwen2.
  const ModelConfig biased = parse_model_config(R"({"model_type": "qwen3", "attention_bias": true})", "c");
  EXPECT_TRUE(biased.has_qkv_bias());
  EXPECT_TRUE(biased.has_o_bias());
  const ModelConfig q2 = parse_model_config(R"({"model_type": "qwen2", "attention_bias": false})", "c");
  EXPECT_TRUE(q2.attention_bias);
  ASSERT_EQ(q2.notes.size(), 1u);
  EXPECT_NE(q2.notes[0].find("attention_bias"), std::string::npos);
}

// A valid tiny config as JSON, for the bad-config cases to edit.
json valid() { return json::parse(model_config_to_json(preset_config("tiny-llama"))); }

::testing::AssertionResult rejects(const json& j, std::vector<std::string> fragments) {
  fragments.push_back("my/config.json");
  return throws_with<FormatError>([&] { parse_model_config(j.dump(), "my/config.json"); }, fragments);
}

TEST(ModelConfig, BadConfigsNameFileAndKey) {
  EXPECT_TRUE(throws_with<FormatError>([] { parse_model_config("{\"model_type\": ", "my/config.json"); },
                                       {"my/config.json", "valid JSON"}));
  EXPECT_TRUE(throws_with<FormatError>([] { parse_model_config("[1, 2]", "my/config.json"); },
                                       {"my/config.json", "a JSON object"}));
  json j = valid();
  j["model_type"] = "gpt2";
  EXPECT_TRUE(rejects(j, {"model_type", "qwen3_moe, qwen3, qwen2, llama", "gpt2"}));
  j = valid();
  j.erase("model_type");   // the one key without a default
  EXPECT_TRUE(rejects(j, {"model_type", "none (missing)"}));
  j = valid();
  j["hidden_size"] = "128";
  EXPECT_TRUE(rejects(j, {"hidden_size", "an integer", "\"128\""}));
  j = valid();
  j["hidden_size"] = 128.5;
  EXPECT_TRUE(rejects(j, {"hidden_size", "an integer"}));
  j = valid();
  j["num_hidden_layers"] = 0;
  EXPECT_TRUE(rejects(j, {"num_hidden_layers", "an integer in [1, 2147483647]"}));
  j = valid();
  j["num_key_value_heads"] = 3;
  EXPECT_TRUE(rejects(j, {"num_key_value_heads", "divisor"}));
  j = valid();
  j.erase("head_dim");
  j["hidden_size"] = 130;
  EXPECT_TRUE(rejects(j, {"head_dim"}));
  j = valid();
  j["tie_word_embeddings"] = 1;
  EXPECT_TRUE(rejects(j, {"tie_word_embeddings", "true or false"}));
  j = valid();
  j["rms_norm_eps"] = -1;
  EXPECT_TRUE(rejects(j, {"rms_norm_eps", "positive"}));
  j = valid();
  j["torch_dtype"] = "int8";
  EXPECT_TRUE(rejects(j, {"torch_dtype", "bfloat16", "int8"}));
  j = valid();
  j["rope_scaling"].erase("factor");
  EXPECT_TRUE(rejects(j, {"rope_scaling.factor"}));
  j = json::parse(model_config_to_json(preset_config("tiny-moe")));
  j["num_experts_per_tok"] = 9;
  EXPECT_TRUE(rejects(j, {"num_experts_per_tok", "at most num_experts"}));
  j["num_experts_per_tok"] = "8";
  EXPECT_TRUE(rejects(j, {"num_experts_per_tok", "an integer"}));
}

TEST(ModelConfig, UnsupportedRopeAndQuantizationNameWhatTheyFound) {
  const auto unsupported = [](const json& j, std::vector<std::string> fragments) {
    fragments.push_back("my/config.json");
    return throws_with<UnsupportedError>([&] { parse_model_config(j.dump(), "my/config.json"); }, fragments);
  };
  json j = valid();
  j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_TRUE(unsupported(j, {"rope_scaling.rope_type", "default, linear or llama3", "yarn"}));
  j = valid();
  j["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};   // the older spelling
  EXPECT_TRUE(unsupported(j, {"rope_scaling.type", "dynamic"}));
  j = valid();
  j["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}};
  EXPECT_TRUE(unsupported(j, {"quant_method", "fp8", "gptq"}));
  j["quantization_config"] = {{"quant_method", "fp8"}, {"fmt", "e5m2"}};
  EXPECT_TRUE(unsupported(j, {"quantization_config.fmt", "e5m2"}));
  j["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {64, 64}}};
  EXPECT_TRUE(unsupported(j, {"weight_block_size", "[128, 128]", "[64,64]"}));
  j["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", "static"}};
  EXPECT_TRUE(unsupported(j, {"activation_scheme", "static"}));
}

// A bad key of a file is a field, in config.json as in the VAE's config and every checked-JSON reader (a call's
// parameter is an argument): one wording for users to search for.
TEST(ModelConfig, ABadKeyIsNamedAsAFieldOfTheFile) {
  const auto message = [](const std::string& text) {
    try {
      parse_model_config(text, "config.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"model_type": "gpt2"})").find("config.json: field 'model_type': expected"), std::string::npos);
  EXPECT_NE(message(R"({"model_type": "qwen3", "hidden_size": "wide"})").find("config.json: field 'hidden_size'"),
            std::string::npos);
  EXPECT_NE(message("[1]").find("config.json: field '(document)': expected a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace fourfold::model
