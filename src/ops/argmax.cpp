// argmax: checks, flattening for dim = nullopt, keepdim, and routing.
#include <algorithm>

#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {

Tensor argmax(const Tensor& x, std::optional<int> dim, bool keepdim) {
  check::dtype_in("argmax", "x", x, {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i32, DType::i64});
  // Without a dim the input is one row of numel elements; a 0-D input is one row of one element.
  const bool flatten = !dim.has_value() || x.dim() == 0;
  const int d = dim ? normalize_dim(*dim, x.dim(), "argmax") : 0;
  const Tensor x_view = flatten ? x.reshape({x.numel()}) : x;
  const int reduced = flatten ? 0 : d;
  if (x_view.size(reduced) == 0)
    fail<ValueError>("argmax", dim ? "dim" : "x",
                     "a non-empty dim to reduce (argmax has no identity for an empty one)",
                     dim ? fmt::format("dim {} of size 0 in shape {}", d, shape_string(x.shape()))
                         : fmt::format("shape {} with no elements", shape_string(x.shape())));
  Shape kept = x_view.shape();
  kept[reduced] = 1;
  Tensor out = Tensor::empty(kept, DType::i64);
  FOURFOLD_DISPATCH(argmax, (ArgmaxArgs{x_view, reduced, out}));
  Shape result;
  if (keepdim) {
    result = x.shape();
    if (flatten) std::fill(result.begin(), result.end(), 1);
    else result[d] = 1;
  } else if (!flatten) {
    result = x.shape();
    result.erase(result.begin() + d);
  }
  return out.reshape(result);
}

}  // namespace fourfold
