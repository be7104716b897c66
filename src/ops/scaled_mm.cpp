// scaled_mm (torch._scaled_mm for FP8): checks, the scaling recipe read from each scale's shape, routing.
#include <optional>

#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

constexpr const char* kOp = "scaled_mm";
constexpr int64_t kBlock = 128;

int64_t blocks(int64_t n) { return (n + kBlock - 1) / kBlock; }

bool is_tensorwise(const Shape& s) {
  if (s.size() > 2) return false;
  for (int64_t d : s)
    if (d != 1) return false;
  return true;
}

// The shapes each recipe expects for one operand, in the order they are tried. Where two recipes share a
// shape (M = 1, K <= 128, ...) both scale every element by the same value, so the first match is as good.
struct Candidate {
  ScaleRecipe recipe;
  Shape shape;
  const char* name;
};

ScaleRecipe recipe_of(const char* arg, const Tensor& scale, const Candidate (&candidates)[3]) {
  check::dtype_in(kOp, arg, scale, {DType::f32});
  if (is_tensorwise(scale.shape())) return ScaleRecipe::tensorwise;
  for (const Candidate& c : candidates)
    if (scale.shape() == c.shape) return c.recipe;
  fail<ShapeError>(kOp, arg,
                   fmt::format("shape [], [1] or [1, 1] (tensorwise), {} ({}), {} ({}) or {} ({})",
                               shape_string(candidates[0].shape), candidates[0].name,
                               shape_string(candidates[1].shape), candidates[1].name,
                               shape_string(candidates[2].shape), candidates[2].name),
                   fmt::format("shape {}", shape_string(scale.shape())));
}

}  // namespace

Tensor scaled_mm(const Tensor& a, const Tensor& b, const Tensor& scale_a, const Tensor& scale_b,
                 const OptTensor& bias, DType out_dtype) {
  check::dtype_in(kOp, "a", a, {DType::f8_e4m3fn, DType::f8_e5m2});
  check::dtype_in(kOp, "b", b, {DType::f8_e4m3fn, DType::f8_e5m2});
  check::rank(kOp, "a", a, 2, "[M, K]");
  check::rank(kOp, "b", b, 2, "[K, N]");
  check::size_is(kOp, "b", b, 0, a.size(1), "K, dim 1 of 'a'");
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  const ScaleRecipe recipe_a = recipe_of("scale_a", scale_a,
                                         {{ScaleRecipe::rowwise, {m, 1}, "rowwise"},
                                          {ScaleRecipe::block_1x128, {m, blocks(k)}, "1x128 blocks"},
                                          {ScaleRecipe::block_128x128, {blocks(m), blocks(k)}, "128x128 blocks"}});
  const ScaleRecipe recipe_b = recipe_of("scale_b", scale_b,
                                         {{ScaleRecipe::rowwise, {1, n}, "rowwise"},
                                          {ScaleRecipe::block_1x128, {blocks(k), n}, "128x1 blocks"},
                                          {ScaleRecipe::block_128x128, {blocks(k), blocks(n)}, "128x128 blocks"}});
  if (bias) {
    check::dtype_in(kOp, "bias", *bias, {DType::f32, DType::bf16});
    check::rank(kOp, "bias", *bias, 1, "[N]");
    check::size_is(kOp, "bias", *bias, 0, n, "N, dim 1 of 'b'");
  }
  // f64 is accepted for the float64 oracle runs of the correctness record, as every float op accepts it.
  if (out_dtype != DType::bf16 && out_dtype != DType::f32 && out_dtype != DType::f16 && out_dtype != DType::f64)
    fail<DTypeError>(kOp, "out_dtype", "dtype " + check::dtype_list({DType::bf16, DType::f32, DType::f16, DType::f64}),
                     std::string(dtype_name(out_dtype)));
  const Tensor sa = recipe_a == ScaleRecipe::tensorwise ? scale_a.reshape({1, 1}) : scale_a;
  const Tensor sb = recipe_b == ScaleRecipe::tensorwise ? scale_b.reshape({1, 1}) : scale_b;
  Tensor out = Tensor::empty({m, n}, out_dtype);
  FOURFOLD_DISPATCH(scaled_mm, (ScaledMmArgs{a, b, sa, sb, recipe_a, recipe_b, bias ? &*bias : nullptr, out}));
  return out;
}

}  // namespace fourfold
