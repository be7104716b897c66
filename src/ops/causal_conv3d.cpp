// causal_conv3d: a composite of the public constant_pad_nd and conv3d; it has no kernel of its own.
#include <fmt/format.h>

#include "fourfold/errors.h"
#include "fourfold/ops.h"
#include "ops/conv_common.h"

namespace fourfold {

Tensor causal_conv3d(const Tensor& x, const Tensor& weight, const OptTensor& bias, std::vector<int64_t> stride,
                     double pad_value) {
  const char* op = "causal_conv3d";
  conv::check_operands(op, x, weight, bias, 3, 1, "[N, C, T, H, W]");
  const std::vector<int64_t> s = conv::expand_param(op, "stride", stride, 3, 1);
  const int64_t kt = weight.size(2), kh = weight.size(3), kw = weight.size(4);
  if (kh % 2 == 0 || kw % 2 == 0)
    fail<ShapeError>(op, "weight", "odd kH and kW (the spatial padding is centred)",
                     fmt::format("shape {}", shape_string(weight.shape())));
  const int64_t ph = (kh - 1) / 2, pw = (kw - 1) / 2;
  // Checked here, on the padded sizes, so that an empty input is reported against causal_conv3d rather than
  // against the conv3d it is made of.
  conv::output_size(op, 2, x.size(2) + kt - 1, kt, s[0], 1);
  conv::output_size(op, 3, x.size(3) + 2 * ph, kh, s[1], 1);
  conv::output_size(op, 4, x.size(4) + 2 * pw, kw, s[2], 1);
  // Frames are padded only before T, so output frame t reads padded frames [t*sT, t*sT + kT), that is input
  // frames <= t*sT: nothing from the future.
  const Tensor padded = constant_pad_nd(x, {pw, pw, ph, ph, kt - 1, 0}, pad_value);
  return conv3d(padded, weight, bias, s, {0, 0, 0}, {1, 1, 1}, 1);
}

}  // namespace fourfold
