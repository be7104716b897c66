// grouped_mm and grouped_mm_out (torch._grouped_mm): case from the ranks, offs validation, routing.
#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

constexpr const char* kOp = "grouped_mm";

struct Plan {
  GroupedMmCase kind;
  Shape out_shape;
};

void check_k(const Tensor& a, int a_dim, const Tensor& b, int b_dim) {
  if (a.size(a_dim) != b.size(b_dim))
    fail<ShapeError>(kOp, "b", fmt::format("size {} at dim {} (K, dim {} of 'a')", a.size(a_dim), b_dim, a_dim),
                     fmt::format("shape {} against 'a' of shape {}", shape_string(b.shape()), shape_string(a.shape())));
}

// offs: int32 [groups] (groups < 0: any length), non-decreasing, within [0, extent]. The values are read on the
// CPU here so that every kernel may trust them.
void check_offs(const Tensor& offs, int64_t groups, int64_t extent, const char* sliced) {
  check::dtype_in(kOp, "offs", offs, {DType::i32});
  check::rank(kOp, "offs", offs, 1, "[G]");
  if (groups >= 0) check::size_is(kOp, "offs", offs, 0, groups, "G, the number of groups");
  const std::vector<double> v = offs.to_vector();
  double previous = 0;
  for (size_t g = 0; g < v.size(); ++g) {
    if (v[g] < previous)
      fail<ValueError>(kOp, "offs",
                       g == 0 ? std::string("non-negative offsets")
                              : fmt::format("non-decreasing offsets (offs[{}] = {})", g - 1, previous),
                       fmt::format("offs[{}] = {}", g, v[g]));
    previous = v[g];
  }
  if (!v.empty() && v.back() > static_cast<double>(extent))
    fail<ValueError>(kOp, "offs", fmt::format("offsets <= {} ({})", extent, sliced),
                     fmt::format("offs[{}] = {}", v.size() - 1, v.back()));
}

Plan plan(const Tensor& a, const Tensor& b, const OptTensor& offs) {
  check::dtype_in(kOp, "a", a, check::kFloatTypes);
  check::dtype_in(kOp, "b", b, check::kFloatTypes);
  check::same_dtype(kOp, "b", b, "a", a);
  auto two_or_three_d = [](const char* name, const Tensor& t) {
    if (t.dim() != 2 && t.dim() != 3)
      fail<ShapeError>(kOp, name, "a 2-D or 3-D tensor", fmt::format("shape {}", shape_string(t.shape())));
  };
  two_or_three_d("a", a);
  two_or_three_d("b", b);
  const bool a3 = a.dim() == 3, b3 = b.dim() == 3;
  if (a3 && b3) {
    if (offs) fail<ValueError>(kOp, "offs", "no offs for 3-D x 3-D (the groups are dim 0)", "an offs tensor");
    check::size_is(kOp, "b", b, 0, a.size(0), "G, dim 0 of 'a'");
    check_k(a, 2, b, 1);
    return {GroupedMmCase::a3d_b3d, {a.size(0), a.size(1), b.size(2)}};
  }
  if (!offs) fail<ValueError>(kOp, "offs", "an int32 offs tensor when 'a' or 'b' is 2-D", "none");
  if (!a3 && b3) {
    check_k(a, 1, b, 1);
    check_offs(*offs, b.size(0), a.size(0), "the rows of 'a'");
    return {GroupedMmCase::a2d_b3d, {a.size(0), b.size(2)}};
  }
  if (a3) {
    check_k(a, 2, b, 0);
    check_offs(*offs, a.size(0), b.size(1), "the columns of 'b'");
    return {GroupedMmCase::a3d_b2d, {a.size(1), b.size(1)}};
  }
  check_k(a, 1, b, 0);
  check_offs(*offs, -1, a.size(1), "K, the columns of 'a'");
  return {GroupedMmCase::a2d_b2d, {offs->size(0), a.size(0), b.size(1)}};
}

void check_out_dtype(const char* arg, DType out, DType a) {
  if (out != a && out != DType::f32)
    fail<DTypeError>(kOp, arg, fmt::format("dtype {} (that of 'a') or float32", dtype_name(a)),
                     std::string(dtype_name(out)));
}

}  // namespace

Tensor grouped_mm(const Tensor& a, const Tensor& b, const OptTensor& offs, std::optional<DType> out_dtype) {
  const Plan p = plan(a, b, offs);
  const DType dtype = out_dtype.value_or(a.dtype());
  check_out_dtype("out_dtype", dtype, a.dtype());
  // Zeros: rows or columns past the last offset are not written by the kernels.
  Tensor out = Tensor::zeros(p.out_shape, dtype);
  FOURFOLD_DISPATCH(grouped_mm, (GroupedMmArgs{a, b, offs ? &*offs : nullptr, p.kind, out}));
  return out;
}

void grouped_mm_out(Tensor& out, const Tensor& a, const Tensor& b, const OptTensor& offs) {
  const Plan p = plan(a, b, offs);
  check::defined(kOp, "out", out);
  check::on_cpu(kOp, "out", out);
  check_out_dtype("out", out.dtype(), a.dtype());
  if (out.shape() != p.out_shape)
    fail<ShapeError>(kOp, "out", fmt::format("shape {}", shape_string(p.out_shape)),
                     fmt::format("shape {}", shape_string(out.shape())));
  FOURFOLD_DISPATCH(grouped_mm, (GroupedMmArgs{a, b, offs ? &*offs : nullptr, p.kind, out}));
}

}  // namespace fourfold
