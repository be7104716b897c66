// rms_norm and its backward: checks, the [R, D] view and routing.
#include <string>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"
#include "ops/normalized_shape.h"

namespace fourfold {
namespace {

// PyTorch's default eps: torch.finfo(x.dtype).eps.
double machine_epsilon(DType dtype) {
  switch (dtype) {
    case DType::f16: return 0x1p-10;
    case DType::bf16: return 0x1p-7;
    case DType::f64: return 0x1p-52;
    default: return 0x1p-23;
  }
}

// x viewed as [R, D], R the product of the dims before normalized_shape (D may be 0).
Shape rows_by_d(const Tensor& x, const Shape& normalized_shape, int64_t d) {
  int64_t rows = 1;
  for (int i = 0; i < x.dim() - static_cast<int>(normalized_shape.size()); ++i) rows *= x.size(i);
  return {rows, d};
}

}  // namespace

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const OptTensor& weight, std::optional<double> eps) {
  const char* op = "rms_norm";
  check::dtype_in(op, "x", x, check::kFloatTypes);
  const int64_t d = norm::check_normalized_shape(op, x, normalized_shape);
  if (weight) norm::check_affine(op, "weight", *weight, x, normalized_shape, /*f32_ok=*/true);
  const Shape flat = rows_by_d(x, normalized_shape, d);
  const Tensor x2 = x.reshape(flat);
  const Tensor w = weight ? weight->reshape({d}) : Tensor();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  Tensor out2 = out.view(flat);
  const RmsNormArgs args{x2, weight ? &w : nullptr, eps.value_or(machine_epsilon(x.dtype())), out2};
  FOURFOLD_DISPATCH(rms_norm, args);
  return out;
}

std::pair<Tensor, Tensor> add_rms_norm(const Tensor& x, const Tensor& residual, const Shape& normalized_shape,
                                       const OptTensor& weight, std::optional<double> eps) {
  const char* op = "add_rms_norm";
  check::dtype_in(op, "x", x, check::kFloatTypes);
  check::dtype_in(op, "residual", residual, check::kFloatTypes);
  check::same_dtype(op, "residual", residual, "x", x);
  if (residual.shape() != x.shape())
    fail<ShapeError>(op, "residual", "the shape of 'x' " + shape_string(x.shape()),
                     "shape " + shape_string(residual.shape()));
  const int64_t d = norm::check_normalized_shape(op, x, normalized_shape);
  if (weight) norm::check_affine(op, "weight", *weight, x, normalized_shape, /*f32_ok=*/true);
  const Shape flat = rows_by_d(x, normalized_shape, d);
  const Tensor x2 = x.reshape(flat), r2 = residual.reshape(flat);
  const Tensor w = weight ? weight->reshape({d}) : Tensor();
  Tensor out = Tensor::empty(x.shape(), x.dtype()), sum = Tensor::empty(x.shape(), x.dtype());
  Tensor out2 = out.view(flat), sum2 = sum.view(flat);
  const RmsNormArgs args{x2, weight ? &w : nullptr, eps.value_or(machine_epsilon(x.dtype())), out2, &r2, &sum2};
  FOURFOLD_DISPATCH(rms_norm, args);
  return {out, sum};
}

RmsNormGrads rms_norm_backward(const Tensor& grad_out, const Tensor& x, const Shape& normalized_shape,
                               const OptTensor& weight, std::optional<double> eps) {
  const char* op = "rms_norm_backward";
  check::dtype_in(op, "x", x, check::kFloatTypes);
  check::dtype_in(op, "grad_out", grad_out, check::kFloatTypes);
  check::same_dtype(op, "grad_out", grad_out, "x", x);
  if (grad_out.shape() != x.shape())
    fail<ShapeError>(op, "grad_out", "the shape of 'x' " + shape_string(x.shape()), "shape " + shape_string(grad_out.shape()));
  const int64_t d = norm::check_normalized_shape(op, x, normalized_shape);
  if (weight) norm::check_affine(op, "weight", *weight, x, normalized_shape);
  const Shape flat = rows_by_d(x, normalized_shape, d);
  const Tensor x2 = x.reshape(flat);
  const Tensor g2 = grad_out.reshape(flat);
  const Tensor w = weight ? weight->reshape({d}) : Tensor();
  RmsNormGrads grads{Tensor::empty(x.shape(), x.dtype()), Tensor()};
  Tensor grad_x = grads.grad_x.view(flat);
  Tensor grad_w;
  if (weight) {
    grads.grad_weight = Tensor::empty(normalized_shape, x.dtype());
    grad_w = grads.grad_weight.view({d});
  }
  const RmsNormBackwardArgs args{g2, x2, weight ? &w : nullptr, eps.value_or(machine_epsilon(x.dtype())), grad_x,
                                 weight ? &grad_w : nullptr};
  FOURFOLD_DISPATCH(rms_norm_backward, args);
  return grads;
}

}  // namespace fourfold
