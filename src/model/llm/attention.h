// Self-attention of one layer over the KV cache: projections, Qwen3's per-head q/k RMSNorm (before rotary),
// rotary embedding (over the first rotary_dim dims of each head), the cache write, grouped-query attention, the
// hybrids' sigmoid output gate, the output projection.
#pragma once

#include <cstdint>

#include "model/llm/kv_cache.h"
#include "model/llm/model_config.h"
#include "model/llm/model_weights.h"

namespace fourfold::model {

// x [T, H] (already normed) at positions [start, start + T); cos and sin [T, D/2] for those positions in x's
// dtype. Writes this chunk's keys and values into `cache` and attends over positions [0, start + T) with
// causal_lower_right, so a prefill chunk over an earlier cache is causal too. Returns [T, H].
Tensor attention(const Tensor& x, const AttentionWeights& w, const ModelConfig& config, const Tensor& cos,
                 const Tensor& sin, KvCache& cache, int64_t layer, int64_t start);

}  // namespace fourfold::model
