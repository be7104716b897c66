// causal_conv1d: checks, the output in x's layout, and routing.
#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {

Tensor causal_conv1d(const Tensor& x, const Tensor& weight, const OptTensor& bias, const OptTensor& conv_state,
                     bool silu) {
  const char* op = "causal_conv1d";
  const auto kTypes = check::kFloatTypes;
  check::dtype_in(op, "x", x, kTypes);
  check::rank(op, "x", x, 3, "[B, C, T]");
  check::dtype_in(op, "weight", weight, kTypes);
  check::rank(op, "weight", weight, 2, "[C, K]");
  const int64_t b = x.size(0), c = x.size(1), t = x.size(2), k = weight.size(1);
  check::size_is(op, "weight", weight, 0, c, "C, the channels of 'x'");
  if (k < 1) fail<ShapeError>(op, "weight", "a kernel width K >= 1", fmt::format("shape {}", shape_string(weight.shape())));
  if (bias) {
    check::dtype_in(op, "bias", *bias, kTypes);
    check::same_dtype(op, "bias", *bias, "weight", weight);
    check::shape_is(op, "bias", *bias, {c}, "[C]");
  }
  Tensor state;
  if (conv_state) {
    state = *conv_state;
    check::dtype_in(op, "conv_state", state, kTypes);
    check::same_dtype(op, "conv_state", state, "x", x);
    check::shape_is(op, "conv_state", state, {b, c, k - 1}, "[B, C, K-1]");
    check::disjoint(op, "conv_state", state, "x", x);
    check::disjoint(op, "conv_state", state, "weight", weight);
    if (bias) check::disjoint(op, "conv_state", state, "bias", *bias);
  }
  // A channel-last x ([B, T, C] in memory, the linear layers' rows) gives a channel-last output.
  const bool channel_last = c > 1 && x.stride(1) == 1;
  Tensor out = channel_last ? Tensor::empty({b, t, c}, x.dtype()).transpose(1, 2) : Tensor::empty({b, c, t}, x.dtype());
  const CausalConv1dArgs args{x, weight, bias ? &*bias : nullptr, conv_state ? &state : nullptr, silu, out};
  FOURFOLD_DISPATCH(causal_conv1d, args);
  return out;
}

}  // namespace fourfold
