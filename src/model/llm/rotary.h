// Rotary position embedding tables: the config's rope_theta, with Llama 3's frequency remapping when the
// config has rope_scaling.
#pragma once

#include <cstdint>
#include <vector>

#include "fourfold/tensor.h"
#include "model/llm/model_config.h"

namespace fourfold::model {

// inv_freq[i] = theta^(-2i / R) for i in [0, R/2), R the rotated dims (head_dim, or its partial_rotary_factor
// part), remapped by rope_scaling (llama3) when present:
// wavelengths below original_max / high_freq_factor are kept, those above original_max / low_freq_factor are
// divided by `factor`, and those between are blended linearly in original_max / wavelength (Hugging Face's
// _compute_llama3_parameters); rope_type linear divides every frequency by `factor`. Computed in double;
// ValueError for another rope_type.
std::vector<double> rope_inverse_frequencies(const ModelConfig& config);

// cos and sin of position * inv_freq for positions [0, positions), [positions, R/2], in `dtype`.
struct RotaryTables {
  Tensor cos, sin;
};
RotaryTables rotary_tables(const ModelConfig& config, int64_t positions, DType dtype);

}  // namespace fourfold::model
