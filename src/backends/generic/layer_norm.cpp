// Generic layer_norm and group_norm: mean by sum-reduce and scale, centre, square, variance by sum-reduce and
// scale plus eps, rsqrt, scale the rows, then weight and bias passes; each pass into its own temporary.
// group_norm is the same normalization over rows of [N * groups, C / groups * S], then per-channel affine.
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

// (x - mean) / sqrt(var + eps) per row of x [rows, d] (contiguous f32), as a new temporary.
Tensor normalize_rows(const Tensor& x, int64_t rows, int64_t d, double eps) {
  const int64_t n = rows * d;
  Tensor mean = empty_f32({rows}), centred = empty_f32({rows, d}), sq = empty_f32({rows, d});
  Tensor var = empty_f32({rows}), inv = empty_f32({rows}), y = empty_f32({rows, d});
  row_reduce(Reduce::sum, x.data_as<float>(), rows, d, mean.data_as<float>());
  affine(mean.data_as<float>(), 1.0f / static_cast<float>(d), 0.0f, mean.data_as<float>(), rows);
  binary(Binary::sub, x.data_as<float>(), mean.data_as<float>(), Broadcast::per_row, centred.data_as<float>(), rows, d);
  unary(Unary::square, centred.data_as<float>(), sq.data_as<float>(), n);
  row_reduce(Reduce::sum, sq.data_as<float>(), rows, d, var.data_as<float>());
  affine(var.data_as<float>(), 1.0f / static_cast<float>(d), static_cast<float>(eps), var.data_as<float>(), rows);
  unary(Unary::rsqrt, var.data_as<float>(), inv.data_as<float>(), rows);
  binary(Binary::mul, centred.data_as<float>(), inv.data_as<float>(), Broadcast::per_row, y.data_as<float>(), rows, d);
  return y;
}

// y op p, p one value per column (broadcast per_col) or per row (per_row), as a new temporary; y without p.
Tensor affine_pass(const Tensor& y, const Tensor* p, Binary op, Broadcast bc, int64_t rows, int64_t cols) {
  if (p == nullptr) return y;
  const Tensor pf = to_f32(*p);
  Tensor out = empty_f32({rows, cols});
  binary(op, y.data_as<float>(), pf.data_as<float>(), bc, out.data_as<float>(), rows, cols);
  return out;
}

bool layer_norm_covers(const LayerNormArgs& a) { return computes(a.x.dtype()); }

void layer_norm(const LayerNormArgs& a) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  if (rows == 0 || d == 0) return;
  const Tensor y = normalize_rows(to_f32(a.x), rows, d, a.eps);
  const Tensor yw = affine_pass(y, a.weight, Binary::mul, Broadcast::per_col, rows, d);
  from_f32(affine_pass(yw, a.bias, Binary::add, Broadcast::per_col, rows, d), a.out);
}

bool group_norm_covers(const GroupNormArgs& a) { return computes(a.x.dtype()); }

void group_norm(const GroupNormArgs& a) {
  const int64_t n = a.x.size(0), c = a.x.size(1), s = a.x.size(2);
  if (a.x.numel() == 0) return;
  const int64_t rows = n * a.groups, d = c / a.groups * s;
  const Tensor y = normalize_rows(to_f32(a.x), rows, d, a.eps);
  // The affine passes see [N * C, S]: one weight and bias value per row, repeated over the batch.
  const Tensor w = a.weight != nullptr ? a.weight->unsqueeze(0).expand({n, c}) : Tensor();
  const Tensor b = a.bias != nullptr ? a.bias->unsqueeze(0).expand({n, c}) : Tensor();
  const Tensor yw = affine_pass(y, a.weight != nullptr ? &w : nullptr, Binary::mul, Broadcast::per_row, n * c, s);
  from_f32(affine_pass(yw, a.bias != nullptr ? &b : nullptr, Binary::add, Broadcast::per_row, n * c, s).view(a.x.shape()),
           a.out);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(layer_norm) {
  t.layer_norm = entry(&layer_norm, &layer_norm_covers);
  t.group_norm = entry(&group_norm, &group_norm_covers);
}

}  // namespace fourfold::generic
