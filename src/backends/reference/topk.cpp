// Reference topk: a stable sort of each row along dim, so that ties keep the lower index first.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "backends/reference/ref_access.h"
#include "backends/reference/ref_order.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

// sorted = false returns the sorted order as well: any order is allowed, and one answer is easier to check.
void topk(const TopkArgs& args) {
  const Tensor& x = args.x;
  const int dim = args.dim;
  const int64_t n = x.size(dim);
  const size_t element = dtype_size(x.dtype());
  Shape outer = x.shape();
  outer[dim] = 1;
  for_each_index(outer, [&](const int64_t* idx) {
    Index index(idx, idx + x.dim());
    std::vector<OrderKey> keys(n);
    for (int64_t j = 0; j < n; ++j) {
      index[dim] = j;
      keys[j] = order_key(x, index.data());
    }
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
      return args.largest ? ranks_above(keys[i], keys[j]) : ranks_above(keys[j], keys[i]);
    });
    for (int64_t r = 0; r < args.k; ++r) {
      Index src = index, dst = index;
      src[dim] = order[r];
      dst[dim] = r;
      std::memcpy(args.values.element_ptr(dst), x.element_ptr(src), element);
      put(args.indices, dst, static_cast<double>(order[r]));
    }
  });
}

}  // namespace fourfold::ref
