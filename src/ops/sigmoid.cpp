// sigmoid: checks and routing.
#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {

Tensor sigmoid(const Tensor& x) {
  check::dtype_in("sigmoid", "x", x, check::kFloatTypes);
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  FOURFOLD_DISPATCH(sigmoid, (UnaryArgs{x, out}));
  return out;
}

}  // namespace fourfold
