// A projection goes to linear or scaled_linear by its weight's dtype; the op API does the rest.
#include "model/llm/projection.h"

namespace fourfold::model {

uint64_t Projection::nbytes() const {
  return weight.nbytes() + (scale ? scale->nbytes() : 0) + (global ? global->nbytes() : 0) + (bias ? bias->nbytes() : 0);
}

Tensor project(const Tensor& x, const Projection& p) {
  if (p.scale) return scaled_linear(x, p.weight, *p.scale, p.bias, p.global);
  return linear(x, p.weight, p.bias);
}

}  // namespace fourfold::model
