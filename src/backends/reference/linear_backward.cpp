// Reference linear_backward: the three gradients of out = x weight^T + bias, each summed in float64.
#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void linear_backward(const LinearBackwardArgs& args) {
  const Tensor& g = args.grad_out;
  const int64_t m_size = args.x.size(0), k_size = args.x.size(1), n_size = args.weight.size(0);
  // grad_x = grad_out weight
  for (int64_t m = 0; m < m_size; ++m)
    for (int64_t k = 0; k < k_size; ++k) {
      double acc = 0.0;
      for (int64_t n = 0; n < n_size; ++n) acc += at(g, m, n) * at(args.weight, n, k);
      put(args.grad_x, Index{m, k}, acc);
    }
  // grad_weight = grad_out^T x
  for (int64_t n = 0; n < n_size; ++n)
    for (int64_t k = 0; k < k_size; ++k) {
      double acc = 0.0;
      for (int64_t m = 0; m < m_size; ++m) acc += at(g, m, n) * at(args.x, m, k);
      put(args.grad_weight, Index{n, k}, acc);
    }
  // grad_bias = grad_out summed over the rows
  if (args.grad_bias != nullptr)
    for (int64_t n = 0; n < n_size; ++n) {
      double acc = 0.0;
      for (int64_t m = 0; m < m_size; ++m) acc += at(g, m, n);
      put(*args.grad_bias, Index{n}, acc);
    }
}

}  // namespace fourfold::ref
