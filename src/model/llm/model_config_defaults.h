// transformers 5.23's defaults for the config keys fourfold reads, per model_type (the dataclass field defaults
// of Qwen3MoeConfig, Qwen3Config, Qwen2Config, LlamaConfig and the hybrids', and their __post_init__ rules). A config.json
// that leaves a key out means this value to transformers, so it must mean the same here.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fourfold::model {

struct ConfigDefaults {
  int64_t vocab_size, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads;
  std::optional<int64_t> num_key_value_heads;   // nullopt: num_attention_heads
  std::optional<int64_t> head_dim;              // nullopt: hidden_size / num_attention_heads
  int64_t max_position_embeddings;
  std::optional<int64_t> bos_token_id, eos_token_id;
  // qwen2/qwen3: layers from this index on are sliding-window layers when use_sliding_window is set.
  int64_t max_window_layers = 28;
  // qwen3_moe (and the hybrids' MoE: qwen3_5_moe_text, qwen3_next)
  int64_t num_experts = 128, num_experts_per_tok = 8, moe_intermediate_size = 768, decoder_sparse_step = 1;
  bool norm_topk_prob = false;
  int64_t shared_expert_intermediate_size = 0;
};

// Common to all four: rms_norm_eps 1e-6, rope_theta 10000 with the default rope, untied embeddings, no
// attention bias (qwen2: q/k/v biases always), hidden_act silu.
constexpr double kDefaultRmsNormEps = 1e-6;
constexpr double kDefaultRopeTheta = 10000.0;

inline std::optional<ConfigDefaults> transformers_defaults(std::string_view model_type) {
  if (model_type == "qwen3_moe") return ConfigDefaults{151936, 2048, 6144, 24, 32, 4, std::nullopt, 32768, {}, {}};
  if (model_type == "qwen3") return ConfigDefaults{151936, 4096, 22016, 32, 32, 32, 128, 32768, {}, {}};
  if (model_type == "qwen2") return ConfigDefaults{151936, 4096, 22016, 32, 32, 32, std::nullopt, 32768, {}, {}};
  if (model_type == "llama")
    return ConfigDefaults{32000, 4096, 11008, 32, 32, std::nullopt, std::nullopt, 2048, 1, 2};
  // The hybrids (Qwen3_5TextConfig, Qwen3_5MoeTextConfig, Qwen3NextConfig); qwen3_5_moe_text has no dense MLP and
  // always renormalizes its top-k.
  if (model_type == "qwen3_5_text") return ConfigDefaults{248320, 4096, 12288, 32, 16, 4, 256, 32768, {}, {}};
  if (model_type == "qwen3_5_moe_text")
    return ConfigDefaults{248320, 2048, 0, 40, 16, 2, 256, 32768, {}, {}, 28, 256, 8, 512, 1, true, 512};
  if (model_type == "qwen3_next")
    return ConfigDefaults{151936, 2048, 5632, 48, 16, 2, 256, 32768, {}, {}, 28, 512, 10, 512, 1, true, 512};
  return std::nullopt;
}

}  // namespace fourfold::model
