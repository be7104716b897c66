// The tensors a Hugging Face checkpoint of each architecture holds: names and shapes, from the config alone.
// The loader checks a folder against it, the synthetic model maker fills it, the engine binds it.
#pragma once

#include <string>
#include <vector>

#include "fourfold/tensor.h"
#include "model/llm/model_config.h"

namespace fourfold::model {

enum class WeightRole {
  embedding,      // model.embed_tokens.weight [V, H]
  norm,           // RMSNorm weights (input/post-attention layernorm, q/k norm, final norm)
  projection,     // a linear weight [out, in] that FP8 checkpoints quantize (attention, MLP, experts)
  bias,           // attention biases (qwen2)
  router,         // mlp.gate.weight [E, H]: kept in high precision by FP8 checkpoints
  lm_head,        // lm_head.weight [V, H] (absent when tied): kept in high precision
  // The hybrids' small tensors, any float dtype in a checkpoint (FP8 ones keep them in high precision):
  gate_linear,    // linear_attn.in_proj_a / in_proj_b [Hv, H], mlp.shared_expert_gate [1, H]
  conv,           // linear_attn.conv1d.weight [C, 1, K]
  decay,          // linear_attn.A_log and dt_bias [Hv]
};

struct WeightSpec {
  std::string name;
  Shape shape;
  WeightRole role;
  int64_t fan_in;   // the input width a projection reduces over (0 for non-projections)
  int64_t layer;    // -1 outside the layers
};

// Every tensor of a checkpoint of `config` in its stored precision, in a stable order (embedding, layers in order,
// final norm, lm_head). FP8 scales are not listed: each projection of a quantized checkpoint also has
// name + "_scale_inv" (see fp8_scale_name / fp8_scale_shape).
std::vector<WeightSpec> weight_layout(const ModelConfig& config);

// Whether a quantized checkpoint of `config` stores this tensor as FP8 with a scale: every projection, and
// lm_head unless modules_to_not_convert exempts it (Fp8Quantization::lm_head_fp8). False when unquantized.
bool stored_as_fp8(const ModelConfig& config, const WeightSpec& spec);

// How many tensors and elements a checkpoint of `config` holds at least (FP8 scales not counted), from the config
// alone in O(1) with overflow-checked arithmetic (FormatError naming `where` on overflow): a loader compares them
// with its files before weight_layout builds a list of that many entries, so that a config claiming 10^9
// experts is refused at once instead of exhausting memory.
struct WeightTotals {
  int64_t tensors = 0;
  int64_t elements = 0;
};
WeightTotals weight_totals(const ModelConfig& config, const std::string& where);

// "x.weight" -> "x.weight_scale_inv".
std::string fp8_scale_name(const std::string& weight_name);
// The weight_scale_inv shape of a projection [out, in] under config's quantization.
Shape fp8_scale_shape(const ModelConfig& config, const Shape& weight_shape);

// The name of layer `layer`'s tensor `suffix`, e.g. layer_weight(3, "self_attn.q_proj.weight").
std::string layer_weight(int64_t layer, const std::string& suffix);
// The name of expert `expert`'s projection in layer `layer`, e.g. "model.layers.3.mlp.experts.7.up_proj.weight".
std::string expert_weight(int64_t layer, int64_t expert, const std::string& projection);

}  // namespace fourfold::model
