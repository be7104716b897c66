#include "model/llm/dense_mlp.h"

namespace fourfold::model {

Tensor dense_mlp(const Tensor& x, const DenseMlpWeights& w) {
  return project(silu_mul(project(x, w.gate), project(x, w.up)), w.down);
}

}  // namespace fourfold::model
