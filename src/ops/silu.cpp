// silu and silu_mul: checks and routing.
#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {

Tensor silu(const Tensor& x) {
  check::dtype_in("silu", "x", x, check::kFloatTypes);
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  FOURFOLD_DISPATCH(silu, (UnaryArgs{x, out}));
  return out;
}

Tensor silu_mul(const Tensor& gate, const Tensor& up) {
  const char* op = "silu_mul";
  check::dtype_in(op, "gate", gate, check::kFloatTypes);
  check::dtype_in(op, "up", up, check::kFloatTypes);
  check::same_dtype(op, "up", up, "gate", gate);
  if (up.shape() != gate.shape())
    fail<ShapeError>(op, "up", "the shape of 'gate' " + shape_string(gate.shape()), "shape " + shape_string(up.shape()));
  Tensor out = Tensor::empty(gate.shape(), gate.dtype());
  FOURFOLD_DISPATCH(silu_mul, (BinaryArgs{gate, up, 1.0, out}));
  return out;
}

}  // namespace fourfold
