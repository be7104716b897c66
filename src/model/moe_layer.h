// The sparse MoE block of Qwen3-MoE: router, softmax in f32, top-k, optional renormalisation, experts.
#pragma once

#include <cstdint>

#include "fourfold/ops.h"

namespace fourfold::model {

// The experts of one layer stacked in checkpoint orientation: gate and up [E, I, H], down [E, H, I]. FP8 weights
// carry their weight_scale_inv stacked the same way ([E, ceil(out/128), ceil(in/128)] or [E, out, 1]).
// This mirrors the op API's MoeExpertWeights (grouped_mm-backed moe_block), which is being added elsewhere;
// once it lands this struct becomes an alias of it.
struct MoeExpertWeights {
  Tensor gate, up, down;
  OptTensor gate_scale, up_scale, down_scale;
};

// x [T, H], router_weight [E, H] -> [T, H] in x's dtype. Hugging Face's Qwen3MoeSparseMoeBlock: router logits,
// softmax in f32, top-k; with norm_topk_prob the k weights are renormalised to sum to one (computed as the
// softmax of the top-k logits, which is the same number and needs no sum op); each token's output is the
// routing-weighted sum of its k experts' silu(gate) * up -> down.
// Composed from existing ops, one active expert at a time (the op API's grouped_mm moe_block replaces it: the
// token order here is already its grouped layout, rows sorted by expert).
Tensor moe_block_fallback(const Tensor& x, const Tensor& router_weight, const MoeExpertWeights& w, int64_t top_k,
                          bool norm_topk_prob);

}  // namespace fourfold::model
