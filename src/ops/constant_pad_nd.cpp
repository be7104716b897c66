// constant_pad_nd and its backward: checks of the pads against the input's shape, the fill value, and routing.
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

std::string pads_string(const std::vector<int64_t>& pads) {
  return fmt::format("[{}]", fmt::join(pads, ", "));
}

// The output shape of padding `shape` by `pads` (pairs from the last dim backwards). `shown` is what the user
// passed and `note` says how `pads` derives from it, so that the backward's messages are not a puzzle.
Shape padded_shape(const char* op, const Shape& shape, const std::vector<int64_t>& pads,
                   const std::vector<int64_t>& shown, const char* note) {
  const int rank = static_cast<int>(shape.size());
  if (pads.size() % 2 != 0)
    fail<ValueError>(op, "pads", "an even number of entries (before, after) pairs",
                     fmt::format("{} entries {}", pads.size(), pads_string(shown)));
  if (pads.size() > 2 * static_cast<size_t>(rank))
    fail<ShapeError>(op, "pads", fmt::format("at most {} entries (2 * rank of shape {})", 2 * rank, shape_string(shape)),
                     fmt::format("{} entries {}", pads.size(), pads_string(shown)));
  Shape out = shape;
  const int padded_dims = static_cast<int>(pads.size() / 2);
  for (int i = 0; i < padded_dims; ++i) {
    const int d = rank - 1 - i;
    const int64_t before = pads[2 * i], after = pads[2 * i + 1];
    const int64_t size = shape[d] + before + after;
    if (size < 0)
      fail<ShapeError>(op, "pads",
                       fmt::format("a resulting size >= 0 at dim {} (size {} padded by {} and {}{})", d, shape[d],
                                   before, after, note),
                       std::to_string(size));
    // PyTorch crops before padding, so a crop larger than the dim is refused even when the opposite side's
    // padding would bring the size back to >= 0 (its narrow() fails there).
    const int64_t cropped = shape[d] + std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0);
    if (cropped < 0)
      fail<ShapeError>(op, "pads",
                       fmt::format("crops of at most the size at dim {} (size {} padded by {} and {}{})", d,
                                   shape[d], before, after, note),
                       fmt::format("a crop of {}", shape[d] - cropped));
    out[d] = size;
  }
  return out;
}

// PyTorch refuses a fill value the integer dtype cannot hold instead of wrapping or saturating it.
void check_fill_value(const char* op, DType dtype, double value) {
  double lo = 0, hi = 0;
  if (dtype == DType::i32) {
    lo = -2147483649.0;   // exclusive bounds: truncation toward zero maps (lo, hi) into the int32 range
    hi = 2147483648.0;
  } else if (dtype == DType::i64) {
    lo = -9223372036854777856.0;   // the double below -2^63: -2^63 itself is representable
    hi = 9223372036854775808.0;
  } else {
    return;
  }
  if (!(value > lo && value < hi))
    fail<ValueError>(op, "value", fmt::format("a value representable in {}", dtype_name(dtype)), fmt::format("{}", value));
}

}  // namespace

Tensor constant_pad_nd(const Tensor& x, const std::vector<int64_t>& pads, double value) {
  check::defined("constant_pad_nd", "x", x);
  check::on_cpu("constant_pad_nd", "x", x);
  const Shape out_shape = padded_shape("constant_pad_nd", x.shape(), pads, pads, "");
  check_fill_value("constant_pad_nd", x.dtype(), value);
  Tensor out = Tensor::empty(out_shape, x.dtype());
  FOURFOLD_DISPATCH(constant_pad_nd, (PadArgs{x, pads, value, out}));
  return out;
}

// The gradient of a pad is the crop that undoes it: constant_pad_nd with every pad negated and zero fill.
// The kernel receives the negated pads, so every tier runs the forward's code path.
Tensor constant_pad_nd_backward(const Tensor& grad_out, const std::vector<int64_t>& pads) {
  check::defined("constant_pad_nd_backward", "grad_out", grad_out);
  check::on_cpu("constant_pad_nd_backward", "grad_out", grad_out);
  std::vector<int64_t> negated(pads.size());
  for (size_t i = 0; i < pads.size(); ++i) negated[i] = -pads[i];
  const Shape in_shape = padded_shape("constant_pad_nd_backward", grad_out.shape(), negated, pads, ", the pads negated");
  Tensor grad_in = Tensor::empty(in_shape, grad_out.dtype());
  FOURFOLD_DISPATCH(constant_pad_nd_backward, (PadArgs{grad_out, negated, 0.0, grad_in}));
  return grad_in;
}

}  // namespace fourfold
