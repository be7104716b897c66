// A decoder's architecture as Hugging Face's config.json states it: the fields fourfold reads for qwen3_moe,
// qwen3, qwen2 and llama. Parsing and writing the JSON live in model_config_json.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fourfold/dtype.h"

namespace fourfold::model {

// Llama 3's rope_scaling {"rope_type": "llama3", factor, low_freq_factor, high_freq_factor,
// original_max_position_embeddings}; the only scaling fourfold implements.
struct RopeScaling {
  std::string rope_type = "llama3";
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

// quantization_config of a Hugging Face FP8 checkpoint: quant_method "fp8", fmt "e4m3",
// weight_block_size [128, 128]; weights F8_E4M3 [out, in] with f32 weight_scale_inv [ceil(out/128), ceil(in/128)].
// fourfold also writes and reads rowwise scales (weight_block_size absent: weight_scale_inv [out, 1]).
struct Fp8Quantization {
  std::string fmt = "e4m3";
  std::optional<std::pair<int64_t, int64_t>> weight_block_size = std::pair<int64_t, int64_t>{128, 128};
  std::vector<std::string> modules_to_not_convert;   // as in the checkpoint (informational)
};

struct ModelConfig {
  std::string model_type;            // "qwen3_moe", "qwen3", "qwen2" or "llama"
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;     // dense MLP width (dense layers; also mlp_only_layers of a MoE model)
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;              // config's head_dim, else hidden_size / num_attention_heads
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  std::optional<RopeScaling> rope_scaling;
  bool tie_word_embeddings = false;
  bool attention_bias = false;       // q/k/v projection biases (qwen2: true)
  DType torch_dtype = DType::bf16;   // the checkpoint's stated dtype ("bfloat16", "float16", "float32")
  // Mixture of experts (qwen3_moe); num_experts == 0 means a dense model.
  int64_t num_experts = 0;
  int64_t num_experts_per_tok = 0;
  int64_t moe_intermediate_size = 0;
  bool norm_topk_prob = true;
  int64_t decoder_sparse_step = 1;
  std::vector<int64_t> mlp_only_layers;
  std::optional<Fp8Quantization> quantization;

  bool has_qk_norm() const { return model_type == "qwen3" || model_type == "qwen3_moe"; }
  // Qwen3-MoE's rule: layer i is sparse when it is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
  bool is_moe_layer(int64_t layer) const;
};

// Parses config.json text. Unknown model_type, missing or ill-typed required keys, non-positive sizes, heads
// not dividing, bad JSON: FormatError naming `file_name` and the key. Implemented in model_config_json.cpp.
ModelConfig parse_model_config(std::string_view json_text, const std::string& file_name);
// config.json text for `config`, readable by parse_model_config and by Hugging Face transformers.
std::string model_config_to_json(const ModelConfig& config);

}  // namespace fourfold::model
