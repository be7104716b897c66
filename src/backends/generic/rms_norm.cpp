// Generic rms_norm: square, sum-reduce, scale to the mean plus eps, rsqrt, scale the rows, multiply by the
// weight, each a pass into its own temporary.
#include "backends/generic/generic.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {

bool rms_norm_covers(const RmsNormArgs& a) { return computes(a.x.dtype()); }

void rms_norm(const RmsNormArgs& a) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  if (rows == 0 || d == 0) return;
  const Tensor x = to_f32(a.x);
  Tensor sq = empty_f32({rows, d}), mean = empty_f32({rows}), inv = empty_f32({rows}), y = empty_f32({rows, d});
  unary(Unary::square, x.data_as<float>(), sq.data_as<float>(), rows * d);
  row_reduce(Reduce::sum, sq.data_as<float>(), rows, d, mean.data_as<float>());
  affine(mean.data_as<float>(), 1.0f / static_cast<float>(d), static_cast<float>(a.eps), mean.data_as<float>(), rows);
  unary(Unary::rsqrt, mean.data_as<float>(), inv.data_as<float>(), rows);
  binary(Binary::mul, x.data_as<float>(), inv.data_as<float>(), Broadcast::per_row, y.data_as<float>(), rows, d);
  if (a.weight == nullptr) {
    from_f32(y, a.out);
    return;
  }
  const Tensor w = to_f32(*a.weight);
  Tensor yw = empty_f32({rows, d});
  binary(Binary::mul, y.data_as<float>(), w.data_as<float>(), Broadcast::per_col, yw.data_as<float>(), rows, d);
  from_f32(yw, a.out);
}

}  // namespace fourfold::generic
