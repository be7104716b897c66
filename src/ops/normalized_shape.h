// Checks shared by rms_norm and layer_norm: the trailing normalized_shape dims and the affine parameters.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "ops/checks.h"

namespace fourfold::norm {

// x's trailing dims must equal normalized_shape (at least one dim, as PyTorch). Returns D, their product.
inline int64_t check_normalized_shape(const char* op, const Tensor& x, const Shape& normalized_shape) {
  if (normalized_shape.empty())
    fail<ShapeError>(op, "normalized_shape", "at least one dim", "[]");
  const size_t n = normalized_shape.size();
  bool fits = static_cast<size_t>(x.dim()) >= n;
  for (size_t i = 0; fits && i < n; ++i) fits = x.shape()[x.dim() - n + i] == normalized_shape[i];
  if (!fits)
    fail<ShapeError>(op, "normalized_shape", fmt::format("the trailing dims of 'x' (shape {})", shape_string(x.shape())),
                     shape_string(normalized_shape));
  return shape_numel(normalized_shape);
}

// An affine parameter (weight or bias) has exactly normalized_shape and x's dtype (or f32, where f32_ok: an
// rms_norm weight kept exact under a bf16 or f16 x).
inline void check_affine(const char* op, const char* arg, const Tensor& t, const Tensor& x,
                         const Shape& normalized_shape, bool f32_ok = false) {
  check::dtype_in(op, arg, t, check::kFloatTypes);
  if (!(f32_ok && t.dtype() == DType::f32 && x.dtype() != DType::f64)) check::same_dtype(op, arg, t, "x", x);
  if (t.shape() != normalized_shape)
    fail<ShapeError>(op, arg, fmt::format("normalized_shape {}", shape_string(normalized_shape)),
                     "shape " + shape_string(t.shape()));
}

}  // namespace fourfold::norm
