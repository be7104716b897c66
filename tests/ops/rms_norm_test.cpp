// rms_norm and its backward on the reference tier: hand cases, the default eps, the formula, finite
// differences, edge values, errors.
#include <cmath>
#include <vector>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

// x / sqrt(mean(x^2) + eps) * w over rows of D, written out on f64 values.
std::vector<double> explicit_rms_norm(const Tensor& x, int64_t d, const Tensor* w, double eps) {
  const auto xv = x.to_vector();
  const std::vector<double> wv = w ? w->to_vector() : std::vector<double>(d, 1.0);
  std::vector<double> out(xv.size());
  for (size_t r = 0; r < xv.size() / d; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < d; ++j) ss += xv[r * d + j] * xv[r * d + j];
    const double rms = std::sqrt(ss / d + eps);
    for (int64_t j = 0; j < d; ++j) out[r * d + j] = xv[r * d + j] / rms * wv[j];
  }
  return out;
}

double tolerance(DType dtype) { return testing::rounding_tolerance(dtype, 1e-13); }

TEST(RmsNorm, HandComputed) {
  testing::ReferenceOnly ref;
  Tensor x = Tensor::from_vector({3, 4, 0, 0}, {2, 2}, DType::f64);
  const double rms = std::sqrt(12.5);
  EXPECT_TRUE(all_close(rms_norm(x, {2}, std::nullopt, 0.0), {3 / rms, 4 / rms, NAN, NAN}, 1e-15, 0));   // 0/0 without eps
  Tensor w = Tensor::from_vector({2, 0.5}, {2}, DType::f64);
  EXPECT_TRUE(all_close(rms_norm(x, {2}, w, 0.5), {6 / std::sqrt(13.0), 2 / std::sqrt(13.0), 0, 0}, 1e-15, 0));
}

TEST(RmsNorm, DefaultEpsIsTheMachineEpsilonOfTheDType) {
  testing::ReferenceOnly ref;
  // x = [a, a] with a^2 = eps / k: the output a / sqrt(a^2 + eps) = 1 / sqrt(1 + k) depends on eps.
  struct Case { DType dtype; double eps, a; };
  for (const Case& c : {Case{DType::f32, 0x1p-23, 0x1p-12}, Case{DType::bf16, 0x1p-7, 0x1p-4},
                        Case{DType::f16, 0x1p-10, 0x1p-5}, Case{DType::f64, 0x1p-52, 0x1p-26}}) {
    Tensor x = Tensor::full({1, 2}, c.a, c.dtype);
    const double expected = c.a / std::sqrt(c.a * c.a + c.eps);
    EXPECT_TRUE(all_close(rms_norm(x, {2}), {expected, expected}, tolerance(c.dtype), 0)) << dtype_name(c.dtype);
    EXPECT_TRUE(testing::bit_equal(rms_norm(x, {2}), rms_norm(x, {2}, std::nullopt, c.eps))) << dtype_name(c.dtype);
  }
  EXPECT_EQ(0x1p-23, 1.1920928955078125e-07);
}

TEST(RmsNorm, MatchesFormulaEveryDTypeLayoutAndNormalizedRank) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    Tensor x = randn({3, 4, 5}, dtype, 1, 2.0);
    Tensor w = randn({4, 5}, dtype, 2);
    Tensor w1 = randn({5}, dtype, 3);
    const double tol = tolerance(dtype);
    EXPECT_TRUE(all_close(rms_norm(x, {4, 5}, w, 1e-5), explicit_rms_norm(x, 20, &w, 1e-5), tol, tol)) << dtype_name(dtype);
    EXPECT_TRUE(all_close(rms_norm(testing::non_contiguous(x), {4, 5}, testing::non_contiguous(w), 1e-5),
                          explicit_rms_norm(x, 20, &w, 1e-5), tol, tol)) << dtype_name(dtype);
    Tensor y = rms_norm(x, {5}, w1, 1e-5);
    EXPECT_EQ(y.shape(), x.shape());
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_TRUE(all_close(y, explicit_rms_norm(x, 5, &w1, 1e-5), tol, tol)) << dtype_name(dtype);
    EXPECT_TRUE(all_close(rms_norm(x, {3, 4, 5}, std::nullopt, 1e-5), explicit_rms_norm(x, 60, nullptr, 1e-5), tol, tol));
  }
  // A broadcast (stride-0) input: every row the same.
  Tensor row = randn({1, 6}, DType::f32, 4);
  Tensor y = rms_norm(row.expand({3, 6}), {6});
  for (int r = 1; r < 3; ++r) EXPECT_TRUE(testing::bit_equal(y.select(0, r), y.select(0, 0)));
}

TEST(RmsNorm, EmptyAndNonFiniteRows) {
  testing::ReferenceOnly ref;
  EXPECT_EQ(rms_norm(Tensor::empty({0, 4}, DType::f32), {4}).shape(), (Shape{0, 4}));
  EXPECT_EQ(rms_norm(Tensor::empty({3, 0}, DType::f32), {0}).shape(), (Shape{3, 0}));
  EXPECT_EQ(rms_norm(Tensor::empty({4}, DType::f32), {4}).shape(), (Shape{4}));
  const auto y = rms_norm(Tensor::from_vector({1, NAN, 2, 3, 4, 5}, {2, 3}, DType::f32), {3}).to_vector();
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(y[j]));
  EXPECT_TRUE(std::isfinite(y[3]) && std::isfinite(y[5]));
  // inf makes the rms inf: inf * 0 is NaN, finite entries become 0 (as PyTorch's x * rsqrt(mean(x^2) + eps)).
  const auto z = rms_norm(Tensor::from_vector({INFINITY, 1.0}, {2}, DType::f32), {2}).to_vector();
  EXPECT_TRUE(std::isnan(z[0]));
  EXPECT_EQ(z[1], 0.0);
}

TEST(RmsNormBackward, MatchesFiniteDifferences) {
  testing::ReferenceOnly ref;
  for (const Shape& normalized : {Shape{5}, Shape{3, 5}}) {
    Tensor x = randn({2, 3, 5}, DType::f64, 1);
    Tensor w = randn(normalized, DType::f64, 2);
    Tensor g = randn({2, 3, 5}, DType::f64, 3);
    const double eps = 1e-3;
    const RmsNormGrads grads = rms_norm_backward(g, x, normalized, w, eps);
    auto fx = [&](const Tensor& xi) { return testing::dot(rms_norm(xi, normalized, w, eps), g); };
    auto fw = [&](const Tensor& wi) { return testing::dot(rms_norm(x, normalized, wi, eps), g); };
    EXPECT_TRUE(all_close(grads.grad_x, testing::finite_difference(fx, x), 1e-6, 1e-8)) << shape_string(normalized);
    EXPECT_TRUE(all_close(grads.grad_weight, testing::finite_difference(fw, w), 1e-6, 1e-8)) << shape_string(normalized);
    EXPECT_EQ(grads.grad_weight.shape(), normalized);
    // Without weight: no grad_weight, and grad_x of weight = 1.
    const RmsNormGrads plain = rms_norm_backward(g, x, normalized, std::nullopt, eps);
    EXPECT_FALSE(plain.grad_weight.defined());
    auto f1 = [&](const Tensor& xi) { return testing::dot(rms_norm(xi, normalized, std::nullopt, eps), g); };
    EXPECT_TRUE(all_close(plain.grad_x, testing::finite_difference(f1, x), 1e-6, 1e-8));
  }
  // Reduced precision and strided inputs: the f64 gradient of the same values, rounded once.
  Tensor x = randn({4, 6}, DType::bf16, 5), w = randn({6}, DType::bf16, 6), g = randn({4, 6}, DType::bf16, 7);
  const RmsNormGrads a = rms_norm_backward(testing::non_contiguous(g), testing::non_contiguous(x), {6}, w);
  const RmsNormGrads b = rms_norm_backward(g.to(DType::f64), x.to(DType::f64), {6}, w.to(DType::f64), 0x1p-7);
  EXPECT_TRUE(testing::bit_equal(a.grad_x, b.grad_x.to(DType::bf16)));
  EXPECT_TRUE(testing::bit_equal(a.grad_weight, b.grad_weight.to(DType::bf16)));
}

TEST(RmsNorm, BadArgumentsNameOpAndArgument) {
  Tensor x = Tensor::zeros({3, 5}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rms_norm(x, {4}); }, {"rms_norm", "'normalized_shape'", "[3, 5]", "[4]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rms_norm(x, {2, 3, 5}); }, {"rms_norm", "'normalized_shape'"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rms_norm(x, {}); }, {"rms_norm", "'normalized_shape'", "at least one"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rms_norm(x, {5}, Tensor::zeros({1, 5}, DType::f32)); },
                                               {"rms_norm", "'weight'", "[5]", "[1, 5]"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { rms_norm(x, {5}, Tensor::zeros({5}, DType::bf16)); },
                                               {"rms_norm", "'weight'", "bfloat16"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { rms_norm(Tensor::zeros({3, 5}, DType::i64), {5}); },
                                               {"rms_norm", "'x'", "int64"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rms_norm_backward(Tensor::zeros({3, 4}, DType::f32), x, {5}); },
                                               {"rms_norm_backward", "'grad_out'", "[3, 5]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rms_norm_backward(x, x, {3}); },
                                               {"rms_norm_backward", "'normalized_shape'"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { rms_norm_backward(x.to(DType::f16), x, {5}); },
                                               {"rms_norm_backward", "'grad_out'", "float16"}));
}

}  // namespace
}  // namespace fourfold
