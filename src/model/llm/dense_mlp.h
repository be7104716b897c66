// The dense MLP of Llama and Qwen: down(silu(gate(x)) * up(x)).
#pragma once

#include "model/llm/model_weights.h"

namespace fourfold::model {

Tensor dense_mlp(const Tensor& x, const DenseMlpWeights& w);

}  // namespace fourfold::model
