// linear and linear_backward: checks, flattening of the leading dims to [M, K], routing.
#include <fmt/format.h>

#include "core/fp4_blocks.h"
#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

// The product of every dim but the last: M once the leading dims are flattened (exact even when K is 0,
// where numel / K would not be).
int64_t leading_rows(const Tensor& t) {
  int64_t m = 1;
  for (int d = 0; d + 1 < t.dim(); ++d) m *= t.size(d);
  return m;
}

Shape with_last(const Shape& shape, int64_t last) {
  Shape s = shape;
  s.back() = last;
  return s;
}

void check_weight_shape(const char* op, const Tensor& x, const Tensor& weight) {
  check::rank(op, "weight", weight, 2, "[N, K]");
  check::size_is(op, "weight", weight, 1, x.size(-1), "K, the last dim of 'x'");
}

void check_weight(const char* op, const Tensor& x, const Tensor& weight) {
  check::dtype_in(op, "weight", weight, check::kFloatTypes);
  check::same_dtype(op, "weight", weight, "x", x);
  check_weight_shape(op, x, weight);
}

// linear's weight: x's dtype, or bf16/f16 storage under f32 x (weight-only low precision for decode).
void check_linear_weight(const char* op, const Tensor& x, const Tensor& weight) {
  const bool low_precision_storage =
      x.dtype() == DType::f32 && (weight.dtype() == DType::bf16 || weight.dtype() == DType::f16);
  if (!low_precision_storage) return check_weight(op, x, weight);
  check_weight_shape(op, x, weight);
}

void check_bias(const char* op, const Tensor& x, const Tensor& bias, int64_t n) {
  check::dtype_in(op, "bias", bias, check::kFloatTypes);
  check::same_dtype(op, "bias", bias, "x", x);
  check::rank(op, "bias", bias, 1, "[N]");
  check::size_is(op, "bias", bias, 0, n, "N, dim 0 of 'weight'");
}

bool is_tensorwise(const Shape& s) {
  if (s.size() > 2) return false;
  for (int64_t d : s)
    if (d != 1) return false;
  return true;
}

// The scaling recipe of an fp8 weight [N, K], read from the scale's shape as scaled_mm reads it.
ScaleRecipe weight_recipe(const char* op, const Tensor& scale, int64_t n, int64_t k) {
  check::dtype_in(op, "weight_scale", scale, {DType::f32});
  const auto blocks = [](int64_t v) { return (v + 127) / 128; };
  if (is_tensorwise(scale.shape())) return ScaleRecipe::tensorwise;
  if (scale.shape() == Shape{n, 1}) return ScaleRecipe::rowwise;
  if (scale.shape() == Shape{blocks(n), blocks(k)}) return ScaleRecipe::block_128x128;
  fail<ShapeError>(op, "weight_scale",
                   fmt::format("shape [] or [1, 1] (tensorwise), [{}, 1] (rowwise) or [{}, {}] (128x128 blocks)", n,
                               blocks(n), blocks(k)),
                   fmt::format("shape {}", shape_string(scale.shape())));
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const OptTensor& bias) {
  constexpr const char* op = "linear";
  check::dtype_in(op, "x", x, check::kFloatTypes);
  check::rank_at_least(op, "x", x, 1);
  check_linear_weight(op, x, weight);
  const int64_t n = weight.size(0);
  if (bias) check_bias(op, x, *bias, n);
  const Tensor x2 = x.reshape({leading_rows(x), x.size(-1)});
  Tensor out = Tensor::empty({x2.size(0), n}, x.dtype());
  FOURFOLD_DISPATCH(linear, (LinearArgs{x2, weight, bias ? &*bias : nullptr, out}));
  return out.view(with_last(x.shape(), n));
}

namespace {

// An FP4 weight [N, K/2] with its block scale [N, K/16] (e4m3fn) or [N, K/32] (e8m0fnu) and a one-element f32
// global scale, if any (core/fp4_blocks.h).
void check_fp4_weight(const char* op, const Tensor& x, const Tensor& weight, const Tensor& scale, const OptTensor& global) {
  check::rank(op, "weight", weight, 2, "[N, K/2] (two FP4 values a byte)");
  const int64_t k = x.size(-1);
  if (weight.size(1) * 2 != k)
    fail<ShapeError>(op, "weight", fmt::format("[N, {}]: K / 2 for K = {}, the last dim of 'x'", k / 2, k),
                     fmt::format("shape {}", shape_string(weight.shape())));
  check::dtype_in(op, "weight_scale", scale, {DType::f8_e4m3fn, DType::f8_e8m0fnu});
  const int64_t block = fp4_block_size(scale.dtype());
  if (k % block != 0)
    fail<ShapeError>(op, "x", fmt::format("a last dim that is a multiple of {} (the block of {} scales)", block,
                                          dtype_name(scale.dtype())),
                     fmt::format("{}", k));
  const Shape expected{weight.size(0), k / block};
  if (scale.shape() != expected)
    fail<ShapeError>(op, "weight_scale", fmt::format("shape {} (one scale per {} values of a row)", shape_string(expected), block),
                     fmt::format("shape {}", shape_string(scale.shape())));
  if (global) {
    check::dtype_in(op, "global_scale", *global, {DType::f32});
    if (global->numel() != 1)
      fail<ShapeError>(op, "global_scale", "one element", fmt::format("shape {}", shape_string(global->shape())));
  }
}

}  // namespace

Tensor scaled_linear(const Tensor& x, const Tensor& weight, const Tensor& weight_scale, const OptTensor& bias,
                     const OptTensor& global_scale) {
  constexpr const char* op = "scaled_linear";
  check::dtype_in(op, "x", x, {DType::f32, DType::bf16, DType::f64});
  check::rank_at_least(op, "x", x, 1);
  if (is_fp4(weight.dtype())) {
    check_fp4_weight(op, x, weight, weight_scale, global_scale);
    const int64_t n = weight.size(0);
    if (bias) check_bias(op, x, *bias, n);
    const Tensor x2 = x.reshape({leading_rows(x), x.size(-1)});
    Tensor out = Tensor::empty({x2.size(0), n}, x.dtype());
    LinearArgs args{x2, weight, bias ? &*bias : nullptr, out, &weight_scale, ScaleRecipe::tensorwise};
    args.global_scale = global_scale ? &*global_scale : nullptr;
    FOURFOLD_DISPATCH(linear, args);
    return out.view(with_last(x.shape(), n));
  }
  if (global_scale)
    fail<DTypeError>(op, "global_scale", "absent for an FP8 weight (only NVFP4 weights have one)", "a tensor");
  check::dtype_in(op, "weight", weight, {DType::f8_e4m3fn, DType::f8_e5m2, DType::f4_e2m1fn_x2});
  check_weight_shape(op, x, weight);
  const int64_t n = weight.size(0);
  const ScaleRecipe recipe = weight_recipe(op, weight_scale, n, weight.size(1));
  const Tensor scale = recipe == ScaleRecipe::tensorwise ? weight_scale.reshape({1, 1}) : weight_scale;
  if (bias) check_bias(op, x, *bias, n);
  const Tensor x2 = x.reshape({leading_rows(x), x.size(-1)});
  Tensor out = Tensor::empty({x2.size(0), n}, x.dtype());
  FOURFOLD_DISPATCH(linear, (LinearArgs{x2, weight, bias ? &*bias : nullptr, out, &scale, recipe}));
  return out.view(with_last(x.shape(), n));
}

LinearGrads linear_backward(const Tensor& grad_out, const Tensor& x, const Tensor& weight, bool has_bias) {
  constexpr const char* op = "linear_backward";
  check::dtype_in(op, "x", x, check::kFloatTypes);
  check::rank_at_least(op, "x", x, 1);
  check_weight(op, x, weight);
  check::dtype_in(op, "grad_out", grad_out, check::kFloatTypes);
  check::same_dtype(op, "grad_out", grad_out, "x", x);
  const Shape out_shape = with_last(x.shape(), weight.size(0));
  if (grad_out.shape() != out_shape)
    fail<ShapeError>(op, "grad_out", fmt::format("shape {} (the output of linear)", shape_string(out_shape)),
                     fmt::format("shape {}", shape_string(grad_out.shape())));
  const int64_t m = leading_rows(x);
  const Tensor x2 = x.reshape({m, x.size(-1)});
  const Tensor g2 = grad_out.reshape({m, weight.size(0)});
  LinearGrads grads;
  grads.grad_x = Tensor::empty(x2.shape(), x.dtype());
  grads.grad_weight = Tensor::empty(weight.shape(), x.dtype());
  if (has_bias) grads.grad_bias = Tensor::empty({weight.size(0)}, x.dtype());
  FOURFOLD_DISPATCH(linear_backward, (LinearBackwardArgs{g2, x2, weight, grads.grad_x, grads.grad_weight,
                                                          has_bias ? &grads.grad_bias : nullptr}));
  grads.grad_x = grads.grad_x.view(x.shape());
  return grads;
}

}  // namespace fourfold
