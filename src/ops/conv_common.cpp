// Argument checks and output shapes shared by conv2d, conv3d and causal_conv3d.
#include "ops/conv_common.h"

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold::conv {

std::vector<int64_t> expand_param(const char* op, const char* arg, const std::vector<int64_t>& values, int spatial,
                                  int64_t min_value) {
  const std::string found = fmt::format("[{}]", fmt::join(values, ", "));
  if (values.size() != 1 && values.size() != static_cast<size_t>(spatial))
    fail<ValueError>(op, arg, fmt::format("1 or {} values", spatial), found);
  for (int64_t v : values)
    if (v < min_value) fail<ValueError>(op, arg, fmt::format("values >= {}", min_value), found);
  return values.size() == 1 ? std::vector<int64_t>(spatial, values[0]) : values;
}

void check_operands(const char* op, const Tensor& x, const Tensor& weight, const OptTensor& bias, int spatial,
                    int64_t groups, const char* layout) {
  check::dtype_in(op, "x", x, check::kFloatTypes);
  check::dtype_in(op, "weight", weight, check::kFloatTypes);
  check::same_dtype(op, "weight", weight, "x", x);
  check::rank(op, "x", x, spatial + 2, layout);
  check::rank(op, "weight", weight, spatial + 2, "[O, C / groups, *kernel]");
  if (groups <= 0) fail<ValueError>(op, "groups", "a positive group count", std::to_string(groups));
  const int64_t out_channels = weight.size(0);
  if (out_channels == 0 || out_channels % groups != 0)
    fail<ShapeError>(op, "weight", fmt::format("out channels (dim 0) a positive multiple of groups={}", groups),
                     fmt::format("shape {}", shape_string(weight.shape())));
  for (int d = 2; d < weight.dim(); ++d)
    if (weight.size(d) < 1)
      fail<ShapeError>(op, "weight", "kernel sizes >= 1", fmt::format("shape {}", shape_string(weight.shape())));
  if (x.size(1) != weight.size(1) * groups)
    fail<ShapeError>(op, "x",
                     fmt::format("{} channels at dim 1 (weight {} has {} per group, groups={})", weight.size(1) * groups,
                                 shape_string(weight.shape()), weight.size(1), groups),
                     fmt::format("shape {}", shape_string(x.shape())));
  if (bias) {
    check::dtype_in(op, "bias", *bias, check::kFloatTypes);
    check::same_dtype(op, "bias", *bias, "x", x);
    check::rank(op, "bias", *bias, 1, "[O]");
    check::size_is(op, "bias", *bias, 0, out_channels, "out channels of 'weight'");
  }
}

int64_t output_size(const char* op, int dim, int64_t padded, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t span = dilation * (kernel - 1) + 1;
  if (padded < span)
    fail<ShapeError>(op, "x",
                     fmt::format("a padded size >= the dilated kernel size {} at dim {} (output size >= 1)", span,
                                 dim),
                     fmt::format("padded size {}", padded));
  return (padded - span) / stride + 1;
}

Tensor forward(const char* op, OpId id, Kernel<ConvArgs> KernelTable::*entry, int spatial, const char* layout,
               const Tensor& x, const Tensor& weight, const OptTensor& bias, const std::vector<int64_t>& stride,
               const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
  check_operands(op, x, weight, bias, spatial, groups, layout);
  const std::vector<int64_t> s = expand_param(op, "stride", stride, spatial, 1);
  const std::vector<int64_t> p = expand_param(op, "padding", padding, spatial, 0);
  const std::vector<int64_t> d = expand_param(op, "dilation", dilation, spatial, 1);
  Shape out_shape = {x.size(0), weight.size(0)};
  for (int i = 0; i < spatial; ++i)
    out_shape.push_back(output_size(op, 2 + i, x.size(2 + i) + 2 * p[i], weight.size(2 + i), s[i], d[i]));
  Tensor out = Tensor::empty(out_shape, x.dtype());
  const Tensor* b = bias ? &*bias : nullptr;
  dispatch(id, entry, ConvArgs{x, weight, b, s, p, d, groups, out});
  return out;
}

}  // namespace fourfold::conv
