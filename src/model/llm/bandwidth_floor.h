// The decode bandwidth floor: a decode step must read every active weight byte and the KV cache up to its
// context once (and a hybrid's linear states, read and written once), so bytes / read bandwidth bounds its time
// from below (the decode target: >= 80% of it).
#pragma once

#include <cstdint>

#include "model/llm/decoder.h"

namespace fourfold::model {

struct DecodeFloor {
  uint64_t weight_bytes = 0;   // active weight bytes per token (ModelWeights::active_bytes_per_token)
  uint64_t kv_bytes = 0;       // keys and values of `context` positions over all layers
  uint64_t state_bytes = 0;    // a hybrid's linear-attention states, read and written once per token
  double read_gb_per_s = 0;
  double seconds_per_token() const {
    return read_gb_per_s > 0 ? (weight_bytes + kv_bytes + state_bytes) / (read_gb_per_s * 1e9) : 0;
  }
  // Fraction of the floor a measured decode rate reaches: floor time / measured time per token.
  double fraction(double tokens_per_s) const { return tokens_per_s > 0 ? seconds_per_token() * tokens_per_s : 0; }
};

// At `context` positions (use the mean context of the decode steps measured).
DecodeFloor decode_floor(const Decoder& decoder, double context, double read_gb_per_s);

// The compute ceiling of a prefill: the multiply-adds (x2) of a forward over `tokens` new positions after
// `cached` ones: every layer's projections (attention; the router and the k active experts of a MoE layer, or
// the dense MLP), causal attention's scores and weighted sums (each position against itself and all before
// it), and lm_head over the last position only (or every one, with all_logits). Norms, rope and softmax are
// not counted (a few flops per element, against thousands per weight).
double prefill_flops(const ModelConfig& config, int64_t tokens, int64_t cached = 0, bool all_logits = false);

}  // namespace fourfold::model
