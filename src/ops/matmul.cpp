// matmul (torch.matmul) and bmm: checks, 1-D promotion, batch broadcasting; both route to the matmul kernels.
#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

constexpr std::initializer_list<DType> kMatmulTypes = {DType::f32, DType::f16, DType::bf16, DType::f64,
                                                       DType::complex64};

void check_operands(const char* op, const Tensor& a, const Tensor& b) {
  check::dtype_in(op, "a", a, kMatmulTypes);
  check::dtype_in(op, "b", b, kMatmulTypes);
  check::same_dtype(op, "b", b, "a", a);
}

void check_inner(const char* op, const Tensor& a, const Tensor& b) {
  if (a.size(-1) != b.size(-2))
    fail<ShapeError>(op, "b", fmt::format("size {} at dim -2 (K, the last dim of 'a')", a.size(-1)),
                     fmt::format("shape {} against 'a' of shape {}", shape_string(b.shape()), shape_string(a.shape())));
}

Shape batch_of(const Tensor& t) { return Shape(t.shape().begin(), t.shape().end() - 2); }

Shape concat(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  constexpr const char* op = "matmul";
  check_operands(op, a, b);
  check::rank_at_least(op, "a", a, 1);
  check::rank_at_least(op, "b", b, 1);
  // A 1-D operand gains a size-1 dim (a row for a, a column for b) that is dropped from the result.
  const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  const Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  check_inner(op, a2, b2);
  const Shape batch = broadcast_shapes(batch_of(a2), batch_of(b2), op);
  const int64_t m = a2.size(-2), k = a2.size(-1), n = b2.size(-1);
  const Tensor ae = a2.expand(concat(batch, {m, k}));
  const Tensor be = b2.expand(concat(batch, {k, n}));
  Tensor out = Tensor::empty(concat(batch, {m, n}), a.dtype());
  FOURFOLD_DISPATCH(matmul, (MatmulArgs{ae, be, out}));
  Shape result = batch;
  if (a.dim() > 1) result.push_back(m);
  if (b.dim() > 1) result.push_back(n);
  return out.view(result);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  constexpr const char* op = "bmm";
  check_operands(op, a, b);
  check::rank(op, "a", a, 3, "[B, M, K]");
  check::rank(op, "b", b, 3, "[B, K, N]");
  check::size_is(op, "b", b, 0, a.size(0), "B, dim 0 of 'a'");
  check_inner(op, a, b);
  Tensor out = Tensor::empty({a.size(0), a.size(1), b.size(2)}, a.dtype());
  FOURFOLD_DISPATCH(matmul, (MatmulArgs{a, b, out}));
  return out;
}

}  // namespace fourfold
