// The decode bandwidth floor: a decode step must read every active weight byte and the KV cache up to its
// context once, so bytes / read bandwidth bounds its time from below (issue 5's target: >= 80% of it).
#pragma once

#include <cstdint>

#include "model/decoder.h"

namespace fourfold::model {

struct DecodeFloor {
  uint64_t weight_bytes = 0;   // active weight bytes per token (ModelWeights::active_bytes_per_token)
  uint64_t kv_bytes = 0;       // keys and values of `context` positions over all layers
  double read_gb_per_s = 0;
  double seconds_per_token() const { return read_gb_per_s > 0 ? (weight_bytes + kv_bytes) / (read_gb_per_s * 1e9) : 0; }
  // Fraction of the floor a measured decode rate reaches: floor time / measured time per token.
  double fraction(double tokens_per_s) const { return tokens_per_s > 0 ? seconds_per_token() * tokens_per_s : 0; }
};

// At `context` positions (use the mean context of the decode steps measured).
DecodeFloor decode_floor(const Decoder& decoder, double context, double read_gb_per_s);

}  // namespace fourfold::model
