// Built-in model shapes: tiny ones for tests and the default run, small-moe (about 1 GB in bf16) and the real
// Qwen3-30B-A3B shapes (with fewer layers to fit a machine).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fourfold/tensor.h"
#include "model/llm/model_config.h"

namespace fourfold::model {

// A checkpoint's tensors by name (stable order: names sort).
using TensorMap = std::map<std::string, Tensor>;

// "tiny-moe", "tiny-qwen3", "tiny-llama", "small-moe", "qwen3-30b-a3b", and the hybrids "tiny-hybrid" and
// "qwen3.6-35b-a3b". layers overrides num_hidden_layers (a hybrid keeps every 4th layer full attention).
// An unknown name is a ValueError listing the presets.
ModelConfig preset_config(const std::string& name, std::optional<int64_t> layers = std::nullopt);
std::vector<std::string> preset_names();

// Refuses before synthetic_weights starts: ValueError naming the preset, the bytes its weights take in `dtype`
// and the memory available (available_memory()), when they cannot fit. `hint` says how to ask for less.
void require_memory_for_preset(const std::string& name, const ModelConfig& config, DType dtype);

// Deterministic random weights for `config` in `dtype` (bf16, f16 or f32), the same bytes for the same seed on
// any thread count. Scaled so activations stay in a sane range through every layer:
//   projections and the router ~ N(0, 1/fan_in), so each keeps the variance of a unit-variance input;
//   o_proj and down_proj further divided by sqrt(2 * layers), so the residual stream, which sums two branch
//   outputs per layer, grows to about twice its input's variance over the whole stack (GPT-2's rule);
//   RMSNorm weights 1 + U(-0.1, 0.1); embeddings ~ N(0, 1); lm_head ~ N(0, 1/H); biases ~ N(0, 0.02^2).
TensorMap synthetic_weights(const ModelConfig& config, DType dtype, uint64_t seed);
// The same tensors of one layer only (layer -1: those outside the layers: embeddings, final norm, lm_head), the
// same values: each tensor's values follow from the seed and its name alone.
TensorMap synthetic_weights_of_layer(const ModelConfig& config, DType dtype, uint64_t seed, int64_t layer);

}  // namespace fourfold::model
