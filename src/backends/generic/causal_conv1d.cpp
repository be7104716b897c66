// Generic causal_conv1d as a graph lowering runs causal_conv1d_fn: the state's columns and x joined into one
// padded temporary, then per tap a shifted copy times that tap's weights added into the sum, the bias, silu and
// the rounding each a pass of its own, and the state's update a copy.
#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

bool causal_conv1d_covers(const CausalConv1dArgs& a) { return computes(a.x.dtype()) && computes(a.weight.dtype()); }

void causal_conv1d(const CausalConv1dArgs& a) {
  const int64_t b = a.x.size(0), c = a.x.size(1), t = a.x.size(2), k = a.weight.size(1);
  const int64_t rows = b * c;
  Tensor padded = empty_f32({b, c, k - 1 + t});
  Tensor past = padded.narrow(2, 0, k - 1), now = padded.narrow(2, k - 1, t);
  if (a.state != nullptr) copy(to_f32(*a.state), past);
  else fill(past, 0.0);
  copy(to_f32(a.x), now);
  if (t > 0) {
    // Each tap's weights as one value per (batch, channel) row.
    const Tensor w = to_f32(a.weight);
    Tensor sum = empty_f32({rows, t}), tap = empty_f32({b, c, t}), term = empty_f32({rows, t}), wj = empty_f32({b, c});
    fill(sum, 0.0);
    for (int64_t j = 0; j < k; ++j) {
      copy(padded.narrow(2, j, t), tap);
      copy(w.narrow(1, j, 1).squeeze(1).unsqueeze(0).expand({b, c}), wj);
      binary(Binary::mul, tap.data_as<float>(), wj.data_as<float>(), Broadcast::per_row, term.data_as<float>(), rows, t);
      binary(Binary::add, sum.data_as<float>(), term.data_as<float>(), Broadcast::none, sum.data_as<float>(), rows, t);
    }
    if (a.bias != nullptr) {
      Tensor bias_rows = empty_f32({b, c});
      copy(to_f32(*a.bias).unsqueeze(0).expand({b, c}), bias_rows);
      binary(Binary::add, sum.data_as<float>(), bias_rows.data_as<float>(), Broadcast::per_row, sum.data_as<float>(),
             rows, t);
    }
    from_f32(a.silu ? silu_f32(sum) : sum, a.out);
  }
  if (a.state != nullptr && k > 1) {
    Tensor last = empty_f32({b, c, k - 1});
    copy(padded.narrow(2, t, k - 1), last);
    from_f32(last, *a.state);
  }
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(causal_conv1d) { t.causal_conv1d = entry(&causal_conv1d, &causal_conv1d_covers); }

}  // namespace fourfold::generic
