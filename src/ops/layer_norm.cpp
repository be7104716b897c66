// layer_norm: checks, the [R, D] view and routing.
#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"
#include "ops/normalized_shape.h"

namespace fourfold {

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const OptTensor& weight, const OptTensor& bias,
                  double eps) {
  const char* op = "layer_norm";
  check::dtype_in(op, "x", x, check::kFloatTypes);
  const int64_t d = norm::check_normalized_shape(op, x, normalized_shape);
  if (weight) norm::check_affine(op, "weight", *weight, x, normalized_shape);
  if (bias) norm::check_affine(op, "bias", *bias, x, normalized_shape);
  int64_t rows = 1;
  for (int i = 0; i < x.dim() - static_cast<int>(normalized_shape.size()); ++i) rows *= x.size(i);
  const Tensor x2 = x.reshape({rows, d});
  const Tensor w = weight ? weight->reshape({d}) : Tensor();
  const Tensor b = bias ? bias->reshape({d}) : Tensor();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  Tensor out2 = out.view({rows, d});
  const LayerNormArgs args{x2, weight ? &w : nullptr, bias ? &b : nullptr, eps, out2};
  FOURFOLD_DISPATCH(layer_norm, args);
  return out;
}

}  // namespace fourfold
