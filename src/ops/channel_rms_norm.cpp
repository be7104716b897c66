// channel_rms_norm: checks, the [N, C, S] view and routing.
#include <cmath>

#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {

Tensor channel_rms_norm(const Tensor& x, const OptTensor& weight, double eps, bool silu) {
  const char* op = "channel_rms_norm";
  check::defined(op, "x", x);
  check::on_cpu(op, "x", x);
  check::dtype_in(op, "x", x, check::kFloatTypes);
  if (x.dim() < 2)
    fail<ShapeError>(op, "x", "a tensor [N, C, *] of rank >= 2 (channels in dim 1)",
                     fmt::format("shape {}", shape_string(x.shape())));
  if (!(eps >= 0.0) || !std::isfinite(eps)) fail<ValueError>(op, "eps", "a finite eps >= 0", fmt::format("{}", eps));
  const int64_t n = x.size(0), c = x.size(1);
  Tensor w;
  if (weight) {
    check::on_cpu(op, "weight", *weight);
    check::same_dtype(op, "weight", *weight, "x", x);
    if (weight->numel() != c || weight->dim() != 1)
      fail<ShapeError>(op, "weight", fmt::format("[{}] (C, dim 1 of x {})", c, shape_string(x.shape())),
                       fmt::format("shape {}", shape_string(weight->shape())));
    w = *weight;
  }
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  // The positions as one dim, contiguous (a strided x, such as a channels-last tensor viewed channel-first, is
  // copied once here: every tier then reads each channel's positions in a row).
  int64_t spatial = 1;
  for (int d = 2; d < x.dim(); ++d) spatial *= x.size(d);
  const Tensor x3 = x.reshape({n, c, spatial}).contiguous();
  Tensor out3 = out.view({n, c, spatial});
  FOURFOLD_DISPATCH(channel_rms_norm, (ChannelNormArgs{x3, weight ? &w : nullptr, eps, silu, out3}));
  return out;
}

}  // namespace fourfold
