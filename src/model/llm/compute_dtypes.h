// The dtypes a decoder computes in: its activations (between ops) and its KV cache. By default both follow the
// checkpoint, as transformers computes a checkpoint in its own dtype and keeps the cache in it.
#pragma once

#include <string>
#include <string_view>

#include "fourfold/dtype.h"
#include "model/llm/model_config.h"

namespace fourfold::model {

struct ComputeDtypes {
  DType activation = DType::f32;
  DType kv_cache = DType::f32;
  std::string activation_from;   // "--dtype auto: the model is bfloat16", "--dtype f32"
  std::string kv_cache_from;     // "--kv-dtype auto: the activations'", "--kv-dtype bf16"
};

// The activation dtype a checkpoint computes in when none is asked for: bf16 for a bf16 checkpoint and an FP8
// one (block or row scales; its other tensors are bf16 and transformers computes it in bf16); f32 for an f32
// checkpoint, and for an f16 one: transformers computes that in f16, which fourfold has no activations for, and
// f32 holds every f16 value (the f16 weights are used in place) where bf16 would round their mantissas.
DType checkpoint_activation(const ModelConfig& config);

// Refuses an activation option other than auto, bf16 or f32 (and a KV cache option other than auto, bf16 or
// f32) with a ValueError naming `where` and the option; called before the model loads.
void check_dtype_options(std::string_view activation, std::string_view kv_cache, const std::string& where);

// `activation`: "auto" (checkpoint_activation), or bf16 / f32 in any spelling parse_dtype takes. `kv_cache`:
// "auto" (the activation dtype, as transformers keeps the cache in the model's dtype), or bf16 / f32.
ComputeDtypes resolve_compute_dtypes(std::string_view activation, std::string_view kv_cache, const ModelConfig& config,
                                     const std::string& where);

}  // namespace fourfold::model
