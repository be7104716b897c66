// The hybrids' per-layer memory of the past in their Gated DeltaNet layers, beside the KV cache of the full ones:
// the conv state (the last K-1 inputs of the short convolution) and the recurrent state (the delta rule's
// [Hv, Dk, Dv] f32 matrices). Both are updated in place by every forward; a snapshot lets a benchmark decode the
// same steps again from one filled context.
#pragma once

#include <cstdint>
#include <vector>

#include "fourfold/tensor.h"
#include "model/llm/model_config.h"

namespace fourfold::model {

class LinearStates {
 public:
  // conv_dtype: the activations' (the conv state holds inputs); the recurrent state is f32 always.
  LinearStates(const ModelConfig& config, DType conv_dtype);

  // [1, C, K-1] view (channel-last memory) and [1, Hv, Dk, Dv] of linear layer `layer` (a layer index of the model).
  Tensor conv(int64_t layer) const;
  Tensor recurrent(int64_t layer) const;

  void reset();                            // zeros: the state before any token
  void save();                             // remembers every state (one copy)
  void restore();                          // back to the saved states; ValueError when none was saved
  bool saved() const { return !saved_.empty(); }

  uint64_t conv_bytes() const;
  uint64_t recurrent_bytes() const;
  uint64_t nbytes() const { return conv_bytes() + recurrent_bytes(); }

 private:
  std::vector<Tensor> conv_, recurrent_;   // per model layer; undefined for full-attention layers
  std::vector<Tensor> saved_;              // conv then recurrent of each linear layer, when saved
};

}  // namespace fourfold::model
