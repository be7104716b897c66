// add and mul: PyTorch's result-type rules, broadcasting to one shape, and routing.
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

// FP8 is refused as PyTorch's CPU add/mul refuse it: there is no arithmetic in those formats.
constexpr std::initializer_list<DType> kBinaryTypes = {DType::f32,       DType::f16, DType::bf16,
                                                       DType::f64,       DType::i32, DType::i64,
                                                       DType::boolean,   DType::complex64};

enum class Category { boolean, integer, floating, complex };

Category category(DType d) {
  if (d == DType::boolean) return Category::boolean;
  if (is_integral(d)) return Category::integer;
  if (is_complex(d)) return Category::complex;
  return Category::floating;
}

// torch.result_type for two tensors: a 0-D operand next to an n-D one only counts when it is of a higher
// category (bool < integer < floating < complex), so bf16[n] + f32[] stays bf16 while int32[n] + f32[] is f32.
// (PyTorch would give complex32 / complex128 for f16 / f64 with a 0-D complex; fourfold has only complex64.)
DType result_type(const Tensor& a, const Tensor& b) {
  const bool a_zero = a.dim() == 0, b_zero = b.dim() == 0;
  if (a_zero == b_zero) return promote_types(a.dtype(), b.dtype());
  const DType dimensioned = a_zero ? b.dtype() : a.dtype();
  const DType zero_dim = a_zero ? a.dtype() : b.dtype();
  return category(zero_dim) > category(dimensioned) ? promote_types(dimensioned, zero_dim) : dimensioned;
}

// PyTorch converts alpha to the result type and refuses a fractional alpha or one that overflows it
// ("For integral input tensors, argument alpha must not be a floating point number").
void check_alpha(const char* op, double alpha, DType out) {
  if (!is_integral(out)) return;
  double lo = -9223372036854775808.0, hi = 9223372036854775808.0;   // [-2^63, 2^63)
  if (out == DType::i32) lo = -2147483648.0, hi = 2147483648.0;
  if (out == DType::boolean) lo = 0.0, hi = 2.0;
  if (!(std::trunc(alpha) == alpha && alpha >= lo && alpha < hi))
    fail<ValueError>(op, "alpha",
                     fmt::format("an integer that fits the {} result (the operands are integral)", dtype_name(out)),
                     fmt::format("{}", alpha));
}

Tensor binary(const char* name, OpId op, Kernel<BinaryArgs> KernelTable::*entry, const Tensor& a, const Tensor& b,
              double alpha) {
  check::dtype_in(name, "a", a, kBinaryTypes);
  check::dtype_in(name, "b", b, kBinaryTypes);
  const DType out_dtype = result_type(a, b);
  if (op == OpId::add) check_alpha(name, alpha, out_dtype);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  const Tensor a_view = a.expand(shape), b_view = b.expand(shape);
  Tensor out = Tensor::empty(shape, out_dtype);
  dispatch(op, entry, BinaryArgs{a_view, b_view, alpha, out});
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, double alpha) {
  return binary("add", OpId::add, &KernelTable::add, a, b, alpha);
}

Tensor mul(const Tensor& a, const Tensor& b) { return binary("mul", OpId::mul, &KernelTable::mul, a, b, 1.0); }

}  // namespace fourfold
