// Generic softmax / log_softmax backward over the last dim, in passes:
//   softmax:      grad_in = y * (g - sum(g * y))   multiply, sum-reduce, subtract per row, multiply
//   log_softmax:  grad_in = g - exp(y) * sum(g)    sum-reduce, exp, multiply per row, subtract
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

void backward_passes(const SoftmaxBackwardArgs& a, bool log) {
  if (a.out.numel() == 0) return;
  const int64_t cols = a.out.size(a.dim), rows = a.out.numel() / cols, n = rows * cols;
  const Tensor g = to_f32(a.grad_out), y = to_f32(a.out);
  Tensor reduced = empty_f32({rows}), t = empty_f32({rows, cols}), gi = empty_f32(a.out.shape());
  if (log) {
    Tensor e = empty_f32({rows, cols});
    row_reduce(Reduce::sum, g.data_as<float>(), rows, cols, reduced.data_as<float>());
    unary(Unary::exp, y.data_as<float>(), e.data_as<float>(), n);
    binary(Binary::mul, e.data_as<float>(), reduced.data_as<float>(), Broadcast::per_row, t.data_as<float>(), rows,
           cols);
    binary(Binary::sub, g.data_as<float>(), t.data_as<float>(), Broadcast::none, gi.data_as<float>(), 1, n);
  } else {
    Tensor gy = empty_f32({rows, cols});
    binary(Binary::mul, g.data_as<float>(), y.data_as<float>(), Broadcast::none, gy.data_as<float>(), 1, n);
    row_reduce(Reduce::sum, gy.data_as<float>(), rows, cols, reduced.data_as<float>());
    binary(Binary::sub, g.data_as<float>(), reduced.data_as<float>(), Broadcast::per_row, t.data_as<float>(), rows,
           cols);
    binary(Binary::mul, y.data_as<float>(), t.data_as<float>(), Broadcast::none, gi.data_as<float>(), 1, n);
  }
  from_f32(gi, a.grad_in);
}

// Rows along another dim would need a transposed pass; the reference takes those.
bool softmax_backward_covers(const SoftmaxBackwardArgs& a) {
  return computes(a.out.dtype()) && a.dim == a.out.dim() - 1;
}

void softmax_backward(const SoftmaxBackwardArgs& args) { backward_passes(args, false); }
void log_softmax_backward(const SoftmaxBackwardArgs& args) { backward_passes(args, true); }

}  // namespace

FOURFOLD_GENERIC_KERNELS(softmax_backward) {
  t.softmax_backward = entry(&softmax_backward, &softmax_backward_covers);
  t.log_softmax_backward = entry(&log_softmax_backward, &softmax_backward_covers);
}

}  // namespace fourfold::generic
