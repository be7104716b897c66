// group_norm: checks, the [N, C, S] view (spatial dims flattened) and routing.
#include <string>

#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {

Tensor group_norm(const Tensor& x, int64_t num_groups, const OptTensor& weight, const OptTensor& bias, double eps) {
  const char* op = "group_norm";
  check::dtype_in(op, "x", x, check::kFloatTypes);
  check::rank_at_least(op, "x", x, 2);
  const int64_t n = x.size(0), c = x.size(1);
  if (num_groups <= 0 || c % num_groups != 0)
    fail<ValueError>(op, "num_groups", fmt::format("a positive divisor of the {} channels of 'x'", c),
                     std::to_string(num_groups));
  auto check_affine = [&](const char* name, const OptTensor& t) {
    if (!t) return;
    check::dtype_in(op, name, *t, check::kFloatTypes);
    check::same_dtype(op, name, *t, "x", x);
    if (t->shape() != Shape{c})
      fail<ShapeError>(op, name, fmt::format("shape [{}] (the channels of 'x')", c), "shape " + shape_string(t->shape()));
  };
  check_affine("weight", weight);
  check_affine("bias", bias);
  int64_t spatial = 1;
  for (int i = 2; i < x.dim(); ++i) spatial *= x.size(i);
  const Shape flat{n, c, spatial};
  const Tensor x3 = x.reshape(flat);
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  Tensor out3 = out.view(flat);
  const GroupNormArgs args{x3, num_groups, weight ? &*weight : nullptr, bias ? &*bias : nullptr, eps, out3};
  FOURFOLD_DISPATCH(group_norm, args);
  return out;
}

}  // namespace fourfold
