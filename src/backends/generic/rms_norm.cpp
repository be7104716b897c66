// Generic rms_norm (and add_rms_norm) and its backward: square, sum-reduce, scale to the mean plus eps, rsqrt,
// scale the rows, multiply by the weight, each a pass into its own temporary.
#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

// 1 / sqrt(mean(x^2) + eps) per row of x [rows, d] (contiguous f32), as a [rows] temporary.
Tensor inverse_rms(const Tensor& x, double eps) {
  const int64_t rows = x.size(0), d = x.size(1);
  Tensor sq = empty_f32({rows, d}), mean = empty_f32({rows}), inv = empty_f32({rows});
  unary(Unary::square, x.data_as<float>(), sq.data_as<float>(), rows * d);
  row_reduce(Reduce::sum, sq.data_as<float>(), rows, d, mean.data_as<float>());
  affine(mean.data_as<float>(), 1.0f / static_cast<float>(d), static_cast<float>(eps), mean.data_as<float>(), rows);
  unary(Unary::rsqrt, mean.data_as<float>(), inv.data_as<float>(), rows);
  return inv;
}

// x * w per column when there is a weight; x itself otherwise.
Tensor times_weight(const Tensor& x, const Tensor* weight) {
  if (weight == nullptr) return x;
  const Tensor w = to_f32(*weight);
  Tensor y = empty_f32(x.shape());
  binary(Binary::mul, x.data_as<float>(), w.data_as<float>(), Broadcast::per_col, y.data_as<float>(), x.size(0),
         x.size(1));
  return y;
}

}  // namespace

Tensor rms_rows_f32(const Tensor& x, const Tensor* weight, double eps) {
  const int64_t rows = x.size(0), d = x.size(1);
  const Tensor inv = inverse_rms(x, eps);
  Tensor y = empty_f32({rows, d});
  binary(Binary::mul, x.data_as<float>(), inv.data_as<float>(), Broadcast::per_row, y.data_as<float>(), rows, d);
  return times_weight(y, weight);
}

namespace {

bool rms_norm_covers(const RmsNormArgs& a) { return computes(a.x.dtype()); }

void rms_norm(const RmsNormArgs& a) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  if (rows == 0 || d == 0) return;
  Tensor x = to_f32(a.x);
  if (a.residual != nullptr) {
    // add_rms_norm: the sum pass, stored rounded to the dtype, then normalized as stored (read back).
    const Tensor r = to_f32(*a.residual);
    Tensor h = empty_f32({rows, d});
    binary(Binary::add, x.data_as<float>(), r.data_as<float>(), Broadcast::none, h.data_as<float>(), rows, d);
    from_f32(h, *a.sum_out);
    x = to_f32(*a.sum_out);
  }
  from_f32(rms_rows_f32(x, a.weight, a.eps), a.out);
}

bool rms_norm_backward_covers(const RmsNormBackwardArgs& a) { return computes(a.x.dtype()); }

// grad_x = inv * gw - x * (inv^3 / D * sum_j gw_j x_j) with gw = g * w;  grad_w = column sums of g * x * inv.
void rms_norm_backward(const RmsNormBackwardArgs& a) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  if (d == 0) return;
  if (rows == 0) {
    if (a.grad_weight != nullptr) fill(*a.grad_weight, 0.0);
    return;
  }
  const int64_t n = rows * d;
  const Tensor x = to_f32(a.x), g = to_f32(a.grad_out);
  const Tensor inv = inverse_rms(x, a.eps);
  const Tensor gw = times_weight(g, a.weight);
  Tensor gwx = empty_f32({rows, d}), dot = empty_f32({rows}), inv3 = empty_f32({rows}), coef = empty_f32({rows});
  binary(Binary::mul, gw.data_as<float>(), x.data_as<float>(), Broadcast::none, gwx.data_as<float>(), 1, n);
  row_reduce(Reduce::sum, gwx.data_as<float>(), rows, d, dot.data_as<float>());
  unary(Unary::cube, inv.data_as<float>(), inv3.data_as<float>(), rows);
  binary(Binary::mul, inv3.data_as<float>(), dot.data_as<float>(), Broadcast::none, coef.data_as<float>(), 1, rows);
  affine(coef.data_as<float>(), 1.0f / static_cast<float>(d), 0.0f, coef.data_as<float>(), rows);
  Tensor t1 = empty_f32({rows, d}), t2 = empty_f32({rows, d}), gx = empty_f32({rows, d});
  binary(Binary::mul, gw.data_as<float>(), inv.data_as<float>(), Broadcast::per_row, t1.data_as<float>(), rows, d);
  binary(Binary::mul, x.data_as<float>(), coef.data_as<float>(), Broadcast::per_row, t2.data_as<float>(), rows, d);
  binary(Binary::sub, t1.data_as<float>(), t2.data_as<float>(), Broadcast::none, gx.data_as<float>(), 1, n);
  from_f32(gx, a.grad_x);
  if (a.grad_weight == nullptr) return;
  // Column sums as row sums of the transposed product (to_f32 materializes the transposed view).
  Tensor gxn = empty_f32({rows, d}), gxi = empty_f32({rows, d}), gw_sum = empty_f32({d});
  binary(Binary::mul, g.data_as<float>(), x.data_as<float>(), Broadcast::none, gxn.data_as<float>(), 1, n);
  binary(Binary::mul, gxn.data_as<float>(), inv.data_as<float>(), Broadcast::per_row, gxi.data_as<float>(), rows, d);
  const Tensor cols = to_f32(gxi.transpose(0, 1));
  row_reduce(Reduce::sum, cols.data_as<float>(), d, rows, gw_sum.data_as<float>());
  from_f32(gw_sum, *a.grad_weight);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(rms_norm) {
  t.rms_norm = entry(&rms_norm, &rms_norm_covers);
  t.rms_norm_backward = entry(&rms_norm_backward, &rms_norm_backward_covers);
}

}  // namespace fourfold::generic
