// upsample_nearest: checks of ranks and output sizes, and routing.
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {

Tensor upsample_nearest(const Tensor& x, const std::vector<int64_t>& output_size) {
  const char* op = "upsample_nearest";
  check::defined(op, "x", x);
  check::on_cpu(op, "x", x);
  if (x.dim() < 3 || x.dim() > 5)
    fail<ShapeError>(op, "x", "a 3-D, 4-D or 5-D tensor [N, C, *spatial] (1 to 3 spatial dims)",
                     fmt::format("shape {}", shape_string(x.shape())));
  const int spatial = x.dim() - 2;
  const std::string sizes = fmt::format("[{}]", fmt::join(output_size, ", "));
  if (output_size.size() != static_cast<size_t>(spatial))
    fail<ValueError>(op, "output_size", fmt::format("{} sizes, one per spatial dim of x {}", spatial,
                                                    shape_string(x.shape())),
                     sizes);
  for (int64_t s : output_size)
    if (s < 1) fail<ValueError>(op, "output_size", "sizes >= 1", sizes);
  // As PyTorch: there is nothing to pick from an empty spatial dim.
  for (int i = 0; i < spatial; ++i)
    if (x.size(2 + i) < 1)
      fail<ShapeError>(op, "x", fmt::format("spatial sizes >= 1 (dim {})", 2 + i),
                       fmt::format("shape {}", shape_string(x.shape())));
  Shape out_shape = {x.size(0), x.size(1)};
  out_shape.insert(out_shape.end(), output_size.begin(), output_size.end());
  Tensor out = Tensor::empty(out_shape, x.dtype());
  FOURFOLD_DISPATCH(upsample_nearest, (UpsampleArgs{x, out}));
  return out;
}

}  // namespace fourfold
