// rms_norm_gated: checks, the [R, D] views, and routing.
#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {

Tensor rms_norm_gated(const Tensor& x, const Tensor& gate, const OptTensor& weight, double eps) {
  const char* op = "rms_norm_gated";
  check::dtype_in(op, "x", x, check::kFloatTypes);
  check::rank_at_least(op, "x", x, 1);
  check::dtype_in(op, "gate", gate, check::kFloatTypes);
  check::same_dtype(op, "gate", gate, "x", x);
  if (gate.shape() != x.shape())
    fail<ShapeError>(op, "gate", "the shape of 'x' " + shape_string(x.shape()), "shape " + shape_string(gate.shape()));
  const int64_t d = x.size(-1);
  if (weight) {
    check::dtype_in(op, "weight", *weight, check::kFloatTypes);
    if (weight->dtype() != x.dtype() && weight->dtype() != DType::f32)
      fail<DTypeError>(op, "weight", "the dtype of 'x' or float32", std::string(dtype_name(weight->dtype())));
    check::shape_is(op, "weight", *weight, {d}, "[D], the last dim of 'x'");
  }
  if (!(eps >= 0)) fail<ValueError>(op, "eps", ">= 0", std::to_string(eps));
  const int64_t rows = d == 0 ? 0 : x.numel() / d;
  const Tensor x2 = x.reshape({rows, d}), g2 = gate.reshape({rows, d});
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  Tensor out2 = out.view({rows, d});
  FOURFOLD_DISPATCH(rms_norm_gated, (RmsNormGatedArgs{x2, g2, weight ? &*weight : nullptr, eps, out2}));
  return out;
}

}  // namespace fourfold
