// Next-token sampling from one row of logits: greedy, temperature, top-k, top-p, with a seed.
#pragma once

#include <cstdint>

#include "fourfold/tensor.h"

namespace fourfold::model {

struct SamplerOptions {
  double temperature = 0.0;   // 0: greedy (argmax); otherwise logits / temperature
  int64_t top_k = 0;          // 0: the whole vocabulary
  double top_p = 1.0;         // keep the smallest set of most likely tokens whose probability reaches top_p
  uint64_t seed = 0;
};

// Deterministic: the same options and the same logits give the same tokens on any machine and thread count
// (its own generator, SplitMix64, rather than a standard distribution whose algorithm varies by library).
class Sampler {
 public:
  explicit Sampler(const SamplerOptions& options);
  // logits [V] or [1, V], any float dtype. Greedy ties give the lowest index (argmax).
  int64_t sample(const Tensor& logits);
  const SamplerOptions& options() const { return options_; }

 private:
  double uniform();           // [0, 1)
  SamplerOptions options_;
  uint64_t state_;
};

}  // namespace fourfold::model
