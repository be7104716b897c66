// FP8 checkpoints as Hugging Face stores them: projections float8_e4m3fn [out, in], each with an f32
// weight_scale_inv (dequantized weight = fp8 value * scale of its block or row).
#pragma once

#include <optional>
#include <string>

#include "model/llm/model_config.h"
#include "model/llm/presets.h"

namespace fourfold::model {

enum class Fp8Recipe {
  block,   // "fp8-block": one scale per 128x128 block, [ceil(out/128), ceil(in/128)] (Qwen3's and DeepSeek's FP8)
  row,     // "fp8-row": one scale per output row, [out, 1]
};
// "fp8-block" or "fp8-row"; anything else is a ValueError listing both.
Fp8Recipe parse_fp8_recipe(const std::string& name);

struct QuantizedCheckpoint {
  ModelConfig config;   // with quantization_config
  TensorMap weights;
};

// Every WeightRole::projection becomes float8_e4m3fn with weight_scale_inv = amax / 448 of its block (or row),
// values rounded by quantize_fp8 (saturating, round to nearest even). Embeddings, norms, router, lm_head and
// biases are kept as they are (shared, not copied); modules_to_not_convert lists lm_head and each MoE layer's
// mlp.gate by full name (transformers matches these names as substrings, so a bare "mlp.gate" would also
// exempt dense mlp.gate_proj layers). The weights are checked against the config first (check_weights); an
// already quantized config is a ValueError.
// include_lm_head: lm_head too, as 8-bit formats of other engines do (llama.cpp's Q8_0 output) and as
// transformers' FP8 loading does for a module not listed in modules_to_not_convert: at a 152K vocabulary the
// bf16 lm_head is half of what an FP8 MoE decode step reads. A ValueError when lm_head is tied to the
// embeddings (embedding gathers bf16 rows; there is no lm_head tensor to quantize).
QuantizedCheckpoint quantize_checkpoint(const ModelConfig& config, const TensorMap& weights, Fp8Recipe recipe,
                                        bool include_lm_head = false);

// FP4 checkpoints in compressed-tensors' layout (fp4_checkpoint.h): "nvfp4" (e4m3 scales per 16 values, a global
// scale per tensor) or "mxfp4" (e8m0 scales per 32).
enum class Fp4Format { nvfp4, mxfp4 };
std::optional<Fp4Format> parse_fp4_format(const std::string& name);   // nullopt for anything else

// The routed experts' projections become FP4 (targets: a regex on mlp.experts.<e>.<proj>), or with
// all_projections every projection (targets "Linear"; ignore lists lm_head, the routers and the hybrids' small
// gates, which transformers and vLLM keep in high precision). NVFP4 as compressed-tensors quantizes: a global
// divisor g = 448 * 6 / amax of the tensor, each block's scale e4m3(amax_block / 6 * g), values rounded to e2m1
// of x / (scale / g) (nearest even, saturating). MXFP4 as the OCP MX format: each block's scale 2^(floor(log2
// amax_block) - 2) as e8m0, values e2m1 of x / scale. An all-zero block gets scale 1 (e4m3) or 2^0. The weights are
// checked against the config first; an already quantized config is a ValueError.
QuantizedCheckpoint quantize_checkpoint_fp4(const ModelConfig& config, const TensorMap& weights, Fp4Format format,
                                            bool all_projections = false);
// Its pieces, for checkpoints made a layer at a time: the quantization_config, and the tensors of `weights` (any
// part of a checkpoint of `config`, whose fp4 is set) that it stores as FP4, replaced by their codes with their
// scales added.
Fp4Quantization fp4_quantization(Fp4Format format, bool all_projections);
TensorMap quantize_fp4_tensors(const ModelConfig& config, TensorMap weights);

// The f32 [out, in] weight an FP8 projection stands for: weight * its scale, for block or rowwise scales
// (the block size follows from the two shapes: 128 per scale entry, or whole rows for [out, 1]).
Tensor dequantize_fp8(const Tensor& weight, const Tensor& scale_inv);

}  // namespace fourfold::model
