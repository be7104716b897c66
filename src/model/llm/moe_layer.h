// The sparse MoE block of Qwen3-MoE: router, softmax in f32, top-k, optional renormalisation, experts.
#pragma once

#include <cstdint>

#include "fourfold/moe.h"
#include "fourfold/ops.h"

namespace fourfold::model {

// The experts of one layer stacked in checkpoint orientation (the op API's struct, fourfold/moe.h): gate and
// up [E, I, H], down [E, H, I]; FP8 weights carry their weight_scale_inv stacked the same way.
using MoeExpertWeights = fourfold::MoeExpertWeights;


}  // namespace fourfold::model
