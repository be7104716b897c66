// Reference linear: out[m, n] = sum_k x[m, k] * weight[n, k] + bias[n], in float64, rounded once.
#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void linear(const LinearArgs& args) {
  const int64_t m_size = args.x.size(0), k_size = args.x.size(1), n_size = args.weight.size(0);
  for (int64_t m = 0; m < m_size; ++m)
    for (int64_t n = 0; n < n_size; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < k_size; ++k) acc += at(args.x, m, k) * at(args.weight, n, k);
      if (args.bias != nullptr) acc += at(*args.bias, n);
      put(args.out, Index{m, n}, acc);
    }
}

}  // namespace fourfold::ref
