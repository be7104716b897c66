// The decoder: embedding, the layers (attention + dense MLP or MoE, each behind an RMSNorm and a residual
// add), the final norm and lm_head, over a KV cache. A hybrid's Gated DeltaNet layers take the attention's place
// in 3 of 4 layers, over their linear states. Prefill is one forward over the whole prompt; decode is a forward
// of one token.
#pragma once

#include <cstdint>
#include <span>

#include "model/llm/kv_cache.h"
#include "model/llm/linear_states.h"
#include "model/llm/model_weights.h"
#include "model/llm/rotary.h"

namespace fourfold::model {

struct DecoderOptions {
  DType activation = DType::f32;   // f32 or bf16
  DType kv_cache = DType::f32;     // bf16 or f32; run and check default it to the activations' (compute_dtypes.h)
  int64_t max_context = 0;         // 0: the config's max_position_embeddings
};

class Decoder {
 public:
  Decoder(ModelConfig config, ModelWeights weights, const DecoderOptions& options);

  // Runs `tokens` at positions [position(), position() + T) and advances the position. Returns f32 logits:
  // [T, V] when all_logits, else [1, V] for the last token only (a prefill needs no more, and lm_head over the
  // whole prompt would cost T times the work). ValueError past max_context or for a token outside the vocab.
  Tensor forward(std::span<const int64_t> tokens, bool all_logits = false);
  int64_t position() const { return position_; }
  void reset();   // forget the context; the cache is overwritten from position 0, the linear states zeroed
  // Back to an earlier position: the positions past it are forgotten (and overwritten by the next forward).
  // Lets a benchmark decode the same steps again from one filled context. ValueError past position(). A hybrid's
  // linear states cannot be rewound token by token: they are saved after every forward of more than one token,
  // and a hybrid rewinds only to the position of the last such forward.
  void rewind(int64_t position);

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  const KvCache& cache() const { return cache_; }
  const LinearStates& linear_states() const { return states_; }
  const DecoderOptions& options() const { return options_; }

 private:
  Tensor mlp(const LayerWeights& layer, const Tensor& x) const;
  ModelConfig config_;
  ModelWeights weights_;
  DecoderOptions options_;
  KvCache cache_;
  LinearStates states_;
  RotaryTables rotary_;
  int64_t position_ = 0;
  int64_t saved_position_ = -1;   // where the linear states were last saved
};

// The one way the commands build a decoder (run, the check's end-to-end workload): the checkpoint's tensors bound
// for `options.activation` (bind_weights checks them against the config), the cache and the states after it.
Decoder build_decoder(const ModelConfig& config, TensorMap weights, const DecoderOptions& options,
                      const std::string& source);

}  // namespace fourfold::model
