// Reference silu: x * sigmoid(x) in float64, one rounding on store.
#include <cmath>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

// Written as x / (1 + exp(-x)), PyTorch's form, so that the edges agree with it: silu(-inf) is -inf / inf = NaN.
void silu(const UnaryArgs& args) {
  for_each_index(args.x.shape(), [&](const int64_t* index) {
    const double x = get(args.x, index);
    put(args.out, index, x / (1.0 + std::exp(-x)));
  });
}

}  // namespace fourfold::ref
