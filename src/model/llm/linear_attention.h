// A hybrid's Gated DeltaNet layer (transformers' Qwen3_5GatedDeltaNet): the four input projections, the short
// causal conv over q, k and v with its state, the gated delta rule with its recurrent state (the gates fused in),
// the gated output norm, out_proj.
#pragma once

#include <cstdint>

#include "model/llm/linear_states.h"
#include "model/llm/model_config.h"
#include "model/llm/model_weights.h"

namespace fourfold::model {

// x [T, H] (already normed), the layer's tokens after those its states hold. Updates the states of `layer` in
// place. Returns [T, H] in x's dtype.
Tensor linear_attention(const Tensor& x, const LinearAttentionWeights& w, const ModelConfig& config,
                        LinearStates& states, int64_t layer);

}  // namespace fourfold::model
