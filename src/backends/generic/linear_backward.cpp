// Generic linear_backward: grad_out, x and weight materialized as f32 in the layouts gemm_nt wants (transposed
// copies where needed), two products and a row reduction, each converted once to the output dtype.
//   grad_x      [M, K] = g [M, N]  (W^T [K, N])^T
//   grad_weight [N, K] = g^T [N, M] (x^T [K, M])^T
//   grad_bias   [N]    = row sums of g^T
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

bool linear_backward_covers(const LinearBackwardArgs& a) { return computes(a.x.dtype()); }

void linear_backward(const LinearBackwardArgs& a) {
  const int64_t m = a.x.size(0), k = a.x.size(1), n = a.weight.size(0);
  const Tensor g = to_f32(a.grad_out), gt = to_f32(a.grad_out.transpose(0, 1));
  const Tensor wt = to_f32(a.weight.transpose(0, 1)), xt = to_f32(a.x.transpose(0, 1));
  Tensor grad_x = empty_f32({m, k}), grad_w = empty_f32({n, k});
  if (m > 0 && k > 0) gemm_nt(g.data_as<float>(), wt.data_as<float>(), grad_x.data_as<float>(), m, k, n);
  if (n > 0 && k > 0) gemm_nt(gt.data_as<float>(), xt.data_as<float>(), grad_w.data_as<float>(), n, k, m);
  from_f32(grad_x, a.grad_x);
  from_f32(grad_w, a.grad_weight);
  if (a.grad_bias != nullptr) {
    Tensor sums = empty_f32({n});
    row_reduce(Reduce::sum, gt.data_as<float>(), n, m, sums.data_as<float>());
    from_f32(sums, *a.grad_bias);
  }
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(linear_backward) {
  t.linear_backward = entry(&linear_backward, &linear_backward_covers);
}

}  // namespace fourfold::generic
