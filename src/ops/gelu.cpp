// gelu (erf and tanh forms): checks and routing.
#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {

Tensor gelu(const Tensor& x, GeluApproximate approximate) {
  check::dtype_in("gelu", "x", x, check::kFloatTypes);
  if (approximate != GeluApproximate::none && approximate != GeluApproximate::tanh)
    fail<ValueError>("gelu", "approximate", "'none' or 'tanh'", std::to_string(static_cast<int>(approximate)));
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  FOURFOLD_DISPATCH(gelu, (GeluArgs{x, approximate, out}));
  return out;
}

}  // namespace fourfold
