// Reference silu and silu_mul: x * sigmoid(x) in float64, one rounding on store.
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

// silu(gate) * up, one rounding on store.
void silu_mul(const BinaryArgs& args) {
  for_each_index(args.out.shape(), [&](const int64_t* index) {
    const double g = get(args.a, index);
    put(args.out, index, g / (1.0 + std::exp(-g)) * get(args.b, index));
  });
}

}  // namespace fourfold::ref
