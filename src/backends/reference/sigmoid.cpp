// Reference sigmoid: 1 / (1 + exp(-x)) in float64, one rounding on store.
#include <cmath>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void sigmoid(const UnaryArgs& args) {
  for_each_index(args.x.shape(), [&](const int64_t* index) {
    put(args.out, index, 1.0 / (1.0 + std::exp(-get(args.x, index))));
  });
}

}  // namespace fourfold::ref
