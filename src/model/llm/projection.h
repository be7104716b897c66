// One linear projection of a checkpoint as the engine uses it: the weight in place (bf16/f16/f32, or FP8 / FP4 with
// its dequantization scales) and an optional bias.
#pragma once

#include "fourfold/ops.h"

namespace fourfold::model {

struct Projection {
  Tensor weight;      // [out, in], checkpoint orientation
  OptTensor scale;    // FP8 weights: weight_scale_inv as stored ([ceil(out/128), ceil(in/128)] or [out, 1]);
                      // FP4 weights ([out, in/2]): the block scale [out, in/block]
  OptTensor global;   // NVFP4: the global scale as scaled_linear multiplies by it (f32 [])
  OptTensor bias;     // [out], in the activation dtype
  uint64_t nbytes() const;   // weight + scale + bias bytes: what one use of the projection reads
};

// x [..., in] -> [..., out] in x's dtype: linear for bf16/f16/f32 weights (bf16/f16 allowed under f32 x),
// scaled_linear for FP8 and FP4 weights.
Tensor project(const Tensor& x, const Projection& p);

}  // namespace fourfold::model
