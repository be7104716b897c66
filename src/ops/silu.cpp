// silu: checks and routing.
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

}  // namespace fourfold
