// Reference argmax: the first index of the largest element along dim, NaN counting as the largest.
#include "backends/reference/ref_access.h"
#include "backends/reference/ref_order.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void argmax(const ArgmaxArgs& args) {
  const Tensor& x = args.x;
  const int dim = args.dim;
  const int64_t n = x.size(dim);
  for_each_index(args.out.shape(), [&](const int64_t* idx) {
    Index index(idx, idx + x.dim());
    index[dim] = 0;
    OrderKey best = order_key(x, index.data());
    int64_t best_index = 0;
    for (int64_t j = 1; j < n; ++j) {
      index[dim] = j;
      const OrderKey key = order_key(x, index.data());
      if (ranks_above(key, best)) {
        best = key;
        best_index = j;
      }
    }
    index[dim] = 0;
    put(args.out, index, static_cast<double>(best_index));
  });
}

}  // namespace fourfold::ref
