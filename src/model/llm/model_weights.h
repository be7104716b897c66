// A checkpoint's tensors bound to the decoder's layers, checked against weight_layout(config).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/llm/moe_layer.h"
#include "model/llm/presets.h"
#include "model/llm/projection.h"

namespace fourfold::model {

struct AttentionWeights {
  Projection q, k, v, o;      // the hybrids' q yields each head's q and its output gate, interleaved per head
  OptTensor q_norm, k_norm;   // Qwen3: RMSNorm over each head before rotary
};

// A Gated DeltaNet layer (the hybrids' linear attention).
struct LinearAttentionWeights {
  Projection qkv, z, b, a, out;   // in_proj_qkv [C, H], in_proj_z [Hv*Dv, H], in_proj_b / a [Hv, H], out_proj
  Tensor conv;                    // [C, K] view of an f32 [K, C]: the taps as causal_conv1d reads them in place
  Tensor a_log, dt_bias;          // [Hv] f32
  Tensor norm;                    // [Dv], the activation dtype: the gated norm's weight (not zero-centred)
};

struct DenseMlpWeights {
  Projection gate, up, down;
};

struct MoeWeights {
  Tensor router;              // [E, H], high precision in every checkpoint
  MoeExpertWeights experts;
  // The hybrids' shared expert, every token's, its output scaled by sigmoid(shared_gate x): [1, H].
  std::optional<DenseMlpWeights> shared;
  Projection shared_gate;
};

struct LayerWeights {
  // The hybrids' zero-centred norms are bound as 1 + w in f32 (rms_norm takes an f32 weight and rounds once).
  Tensor input_norm, post_attention_norm;
  AttentionWeights attention;                        // full-attention layers
  std::optional<LinearAttentionWeights> linear;      // a hybrid's Gated DeltaNet layers (attention then unused)
  std::optional<DenseMlpWeights> mlp;   // exactly one of mlp and moe
  std::optional<MoeWeights> moe;
};

struct ModelWeights {
  Tensor embed_tokens;        // [V, H], used in place (embedding gathers rows)
  std::vector<LayerWeights> layers;
  Tensor final_norm;
  Projection lm_head;         // [V, H], FP8 with its scale where quantized; embed_tokens itself when tied
  // Bytes the binding copied rather than used in place, and why (one line each), for the run's memory lines.
  uint64_t copied_bytes = 0;
  std::vector<std::string> copies;
  // Weight bytes one decode token reads: attention, norms, dense MLPs, router, the k active experts of each
  // MoE layer (k / E of the experts), lm_head and one embedding row.
  uint64_t active_bytes_per_token = 0;
  uint64_t total_bytes = 0;   // every weight the decoder holds
};

// Binds `weights` (consumed: tensors that must be copied are released as soon as they are) to the layers of
// `config`. Every tensor of weight_layout(config) must be present with its shape; projections may be FP8
// (float8_e4m3fn / float8_e5m2) with name + "_scale_inv" f32 of fp8_scale_shape; other tensors bf16, f16 or
// f32. A missing, extra, misshapen or ill-typed tensor is a FormatError naming `source` and the tensor.
// Small tensors (norms, biases) are converted to `activation` dtype (the ops take one dtype); projections stay
// in place when linear accepts them under `activation` (same dtype, or bf16/f16 under f32), else converted.
ModelWeights bind_weights(const ModelConfig& config, TensorMap weights, DType activation, const std::string& source);

}  // namespace fourfold::model
