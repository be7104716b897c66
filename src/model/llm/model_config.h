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

// RoPE scaling as transformers states it, in rope_parameters (5.x) or rope_scaling (4.x): Llama 3's "llama3"
// {factor, low_freq_factor, high_freq_factor, original_max_position_embeddings}, or "linear" {factor} (positions
// divided by factor). The only scalings fourfold implements; the reader refuses the others by name.
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
  std::vector<std::string> modules_to_not_convert;   // as in the checkpoint
  // Whether lm_head is FP8: as transformers decides, unless an entry of modules_to_not_convert is a substring of
  // its name (Hugging Face FP8 checkpoints list "lm_head"; fourfold quantize --lm-head leaves it out).
  bool lm_head_fp8() const {
    for (const std::string& m : modules_to_not_convert)
      if (std::string_view("lm_head").find(m) != std::string_view::npos) return false;
    return true;
  }
};

// quantization_config of a compressed-tensors FP4 checkpoint (core/fp4_blocks.h): quant_method
// "compressed-tensors", format "nvfp4-pack-quantized" (e4m3 scales per 16 values, a weight_global_scale per
// tensor) or "mxfp4-pack-quantized" (e8m0 scales per 32); tensors X.weight_packed (U8 [out, in/2]),
// X.weight_scale, X.weight_global_scale. A Linear module is FP4 when an entry of `targets` matches it and none of
// `ignore` does: "Linear" (every Linear), "re:<regex>" (matching the whole module name) or the module's name.
// Only projections and lm_head may be FP4 (the router and the hybrids' small gates are refused when targeted).
struct Fp4Quantization {
  bool nv = true;   // nvfp4-pack-quantized; false: mxfp4-pack-quantized
  std::vector<std::string> targets = {"Linear"};
  std::vector<std::string> ignore;
  int64_t block() const { return nv ? 16 : 32; }
  const char* format() const { return nv ? "nvfp4-pack-quantized" : "mxfp4-pack-quantized"; }
};

// The token mixer of a layer of the 2026 hybrids (config.json's layer_types).
enum class LayerType { full_attention, linear_attention };

// Gated DeltaNet's sizes: the linear_* keys of qwen3_5(_moe) and qwen3_next configs.
struct LinearAttentionConfig {
  int64_t conv_kernel = 4;          // linear_conv_kernel_dim
  int64_t key_head_dim = 128;
  int64_t value_head_dim = 128;
  int64_t num_key_heads = 16;
  int64_t num_value_heads = 32;
  int64_t key_dim() const { return num_key_heads * key_head_dim; }
  int64_t value_dim() const { return num_value_heads * value_head_dim; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }   // q, k and v, convolved together
};

struct ModelConfig {
  // "qwen3_moe", "qwen3", "qwen2", "llama", or a hybrid: "qwen3_5_moe_text", "qwen3_5_text", "qwen3_next" (the
  // multimodal qwen3_5_moe / qwen3_5 folders are read as their text_config, wrapper naming the outer type)
  std::string model_type;
  std::string wrapper;               // "qwen3_5_moe" / "qwen3_5" for a nested text_config, else empty
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
  // Attention projection biases: qwen2 always has q/k/v biases (its config has no key); llama, qwen3 and
  // qwen3_moe have q/k/v/o biases exactly when attention_bias is true, as transformers builds them.
  bool attention_bias = false;
  DType torch_dtype = DType::bf16;   // the checkpoint's stated dtype ("bfloat16", "float16", "float32")
  bool torch_dtype_stated = true;    // false: config.json has no dtype; the loader takes the weights' own
  // Token ids the config names (generation_config.json may override eos); empty/nullopt when it names none.
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;
  // Mixture of experts (qwen3_moe); num_experts == 0 means a dense model.
  int64_t num_experts = 0;
  int64_t num_experts_per_tok = 0;
  int64_t moe_intermediate_size = 0;
  bool norm_topk_prob = true;
  int64_t decoder_sparse_step = 1;
  std::vector<int64_t> mlp_only_layers;
  std::optional<Fp8Quantization> quantization;
  std::optional<Fp4Quantization> fp4;              // a compressed-tensors FP4 checkpoint (never with quantization)
  // The hybrids: each layer's token mixer, Gated DeltaNet's sizes, the rotated part of a head, the shared expert.
  std::vector<LayerType> layer_types;              // one per layer; empty for the non-hybrid types
  LinearAttentionConfig linear;
  double partial_rotary_factor = 1.0;              // rotary over the first head_dim * factor dims of each head
  int64_t shared_expert_intermediate_size = 0;     // 0: no shared expert
  // How the checkpoint stores each MoE layer's experts: one tensor per expert and projection, or transformers 5's
  // fused [E, 2I, H] gate_up_proj and [E, H, I] down_proj. Found from the files, not from config.json.
  bool fused_experts = false;
  // What the reader did not find in config.json and took from transformers' defaults for this model_type
  // ("num_key_value_heads = 32"), and keys it read but that change nothing here (each with why), so a run can
  // say both. Not part of the architecture: two configs that differ only here describe the same model.
  std::vector<std::string> defaults_taken;
  std::vector<std::string> notes;

  bool is_hybrid() const {
    return model_type == "qwen3_5_moe_text" || model_type == "qwen3_5_text" || model_type == "qwen3_next";
  }
  bool is_linear_layer(int64_t layer) const {
    return !layer_types.empty() && layer_types[static_cast<size_t>(layer)] == LayerType::linear_attention;
  }
  // The hybrids' full attention gates its output (q_proj yields q and a gate per head) and every RMSNorm but
  // Gated DeltaNet's own is zero-centred: (1 + w) * normed.
  bool attn_output_gate() const { return is_hybrid(); }
  bool zero_centred_norms() const { return is_hybrid(); }
  // The dims rotary turns in each head: head_dim * partial_rotary_factor, as transformers truncates it.
  int64_t rotary_dim() const { return static_cast<int64_t>(static_cast<double>(head_dim) * partial_rotary_factor); }
  // Where the decoder's tensors live: "model." or, for the multimodal wrappers, "model.language_model.".
  std::string weight_prefix() const { return wrapper.empty() ? "model." : "model.language_model."; }
  bool has_qk_norm() const { return model_type == "qwen3" || model_type == "qwen3_moe" || is_hybrid(); }
  bool has_qkv_bias() const { return attention_bias; }
  bool has_o_bias() const { return attention_bias && model_type != "qwen2"; }
  // Qwen3-MoE's (and Qwen3-Next's) rule: layer i is sparse when it is not in mlp_only_layers and
  // (i + 1) % decoder_sparse_step == 0. qwen3_5_moe_text: every layer.
  bool is_moe_layer(int64_t layer) const;
};

// Parses config.json text in either spelling transformers has written (4.x: rope_theta + rope_scaling,
// num_experts, torch_dtype; 5.x: rope_parameters, num_local_experts, dtype). A key that is absent takes
// transformers 5's default for the model_type (listed in defaults_taken). Unknown model_type, ill-typed keys,
// non-positive sizes, heads not dividing, bad JSON: FormatError naming `file_name` and the key. A key whose
// value changes the math in a way fourfold does not implement (another rope type, sliding-window attention, an
// activation other than silu, MLP biases, another quantization): UnsupportedError naming the key.
// Implemented in model_config_json.cpp.
ModelConfig parse_model_config(std::string_view json_text, const std::string& file_name);
// config.json text for `config`, readable by parse_model_config and by Hugging Face transformers.
std::string model_config_to_json(const ModelConfig& config);

}  // namespace fourfold::model
