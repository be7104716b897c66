// Generic softmax and log_softmax over the last dim: max-reduce, subtract, exp, sum-reduce, then divide (or
// log and subtract), each pass into its own temporary.
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

void softmax_passes(const SoftmaxArgs& a, bool log) {
  if (a.x.numel() == 0) return;
  const int64_t cols = a.x.size(a.dim), rows = a.x.numel() / cols;
  const Tensor x = to_f32(a.x);
  Tensor max = empty_f32({rows}), shifted = empty_f32({rows, cols}), e = empty_f32({rows, cols});
  Tensor sum = empty_f32({rows}), y = empty_f32(a.x.shape());
  row_reduce(Reduce::max, x.data_as<float>(), rows, cols, max.data_as<float>());
  // An all -inf row gives -inf - -inf = NaN here, the 0/0 PyTorch produces; a NaN propagates through exp/sum.
  binary(Binary::sub, x.data_as<float>(), max.data_as<float>(), Broadcast::per_row, shifted.data_as<float>(), rows,
         cols);
  unary(Unary::exp, shifted.data_as<float>(), e.data_as<float>(), rows * cols);
  row_reduce(Reduce::sum, e.data_as<float>(), rows, cols, sum.data_as<float>());
  if (log) {
    Tensor log_sum = empty_f32({rows});
    unary(Unary::log, sum.data_as<float>(), log_sum.data_as<float>(), rows);
    binary(Binary::sub, shifted.data_as<float>(), log_sum.data_as<float>(), Broadcast::per_row, y.data_as<float>(),
           rows, cols);
  } else {
    binary(Binary::div, e.data_as<float>(), sum.data_as<float>(), Broadcast::per_row, y.data_as<float>(), rows, cols);
  }
  from_f32(y, a.out);
}

// Rows along another dim would need a transposed pass; the reference takes those.
bool softmax_covers(const SoftmaxArgs& a) { return computes(a.x.dtype()) && a.dim == a.x.dim() - 1; }

void softmax(const SoftmaxArgs& args) { softmax_passes(args, false); }
void log_softmax(const SoftmaxArgs& args) { softmax_passes(args, true); }

}  // namespace

FOURFOLD_GENERIC_KERNELS(softmax) {
  t.softmax = entry(&softmax, &softmax_covers);
  t.log_softmax = entry(&log_softmax, &softmax_covers);
}

}  // namespace fourfold::generic
