// layer_norm on the reference tier: hand case, mean 0 / variance 1 rows, the affine formula, edge values, errors.
#include <cmath>
#include <vector>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

std::vector<double> explicit_layer_norm(const Tensor& x, int64_t d, const Tensor* w, const Tensor* b, double eps) {
  const auto xv = x.to_vector();
  const std::vector<double> wv = w ? w->to_vector() : std::vector<double>(d, 1.0);
  const std::vector<double> bv = b ? b->to_vector() : std::vector<double>(d, 0.0);
  std::vector<double> out(xv.size());
  for (size_t r = 0; r < xv.size() / d; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += xv[r * d + j] / d;
    for (int64_t j = 0; j < d; ++j) var += (xv[r * d + j] - mean) * (xv[r * d + j] - mean) / d;
    for (int64_t j = 0; j < d; ++j) out[r * d + j] = (xv[r * d + j] - mean) / std::sqrt(var + eps) * wv[j] + bv[j];
  }
  return out;
}

double tolerance(DType dtype) { return testing::rounding_tolerance(dtype); }

TEST(LayerNorm, HandComputed) {
  testing::ReferenceOnly ref;
  Tensor x = Tensor::from_vector({1, 2, 3}, {1, 3}, DType::f64);
  const double s = std::sqrt(2.0 / 3 + 1e-5);   // biased variance 2/3, default eps 1e-5
  EXPECT_TRUE(all_close(layer_norm(x, {3}), {-1 / s, 0, 1 / s}, 1e-15, 1e-15));
  Tensor w = Tensor::from_vector({1, 2, 3}, {3}, DType::f64), b = Tensor::from_vector({0.5, 0.5, -1}, {3}, DType::f64);
  EXPECT_TRUE(all_close(layer_norm(x, {3}, w, b, 0.0), {-std::sqrt(1.5) + 0.5, 0.5, 3 * std::sqrt(1.5) - 1}, 1e-15, 1e-15));
  // A constant row has variance 0: the output is 0 (then the bias).
  EXPECT_TRUE(all_close(layer_norm(Tensor::full({2, 4}, 7.0, DType::f32), {4}), std::vector<double>(8, 0.0), 0, 0));
}

TEST(LayerNorm, RowsHaveMeanZeroAndVarianceOneWithoutAffine) {
  testing::ReferenceOnly ref;
  Tensor x = randn({4, 3, 7}, DType::f64, 1, 5.0);
  for (const Shape& normalized : {Shape{7}, Shape{3, 7}}) {
    const int64_t d = shape_numel(normalized);
    const auto y = layer_norm(testing::non_contiguous(x), normalized, std::nullopt, std::nullopt, 0.0).to_vector();
    for (size_t r = 0; r < y.size() / d; ++r) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < d; ++j) mean += y[r * d + j] / d;
      for (int64_t j = 0; j < d; ++j) var += (y[r * d + j] - mean) * (y[r * d + j] - mean) / d;
      EXPECT_NEAR(mean, 0.0, 1e-14);
      EXPECT_NEAR(var, 1.0, 1e-13);
    }
  }
}

TEST(LayerNorm, MatchesFormulaEveryDTypeAndLayout) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    Tensor x = randn({3, 4, 5}, dtype, 1, 2.0);
    Tensor w = randn({4, 5}, dtype, 2), b = randn({4, 5}, dtype, 3);
    const double tol = tolerance(dtype);
    EXPECT_TRUE(all_close(layer_norm(x, {4, 5}, w, b), explicit_layer_norm(x, 20, &w, &b, 1e-5), tol, tol)) << dtype_name(dtype);
    EXPECT_TRUE(all_close(layer_norm(testing::non_contiguous(x), {4, 5}, testing::non_contiguous(w), testing::non_contiguous(b)),
                          explicit_layer_norm(x, 20, &w, &b, 1e-5), tol, tol)) << dtype_name(dtype);
    // weight only, bias only
    Tensor w5 = randn({5}, dtype, 4), b5 = randn({5}, dtype, 5);
    EXPECT_TRUE(all_close(layer_norm(x, {5}, w5, std::nullopt, 1e-3), explicit_layer_norm(x, 5, &w5, nullptr, 1e-3), tol, tol));
    EXPECT_TRUE(all_close(layer_norm(x, {5}, std::nullopt, b5, 1e-3), explicit_layer_norm(x, 5, nullptr, &b5, 1e-3), tol, tol));
    EXPECT_EQ(layer_norm(x, {5}).dtype(), dtype);
  }
  // A broadcast weight (stride 0) is as good as a materialized one.
  Tensor x = randn({2, 6}, DType::f32, 6);
  Tensor w = Tensor::full({1}, 1.5, DType::f32).expand({6});
  EXPECT_TRUE(testing::bit_equal(layer_norm(x, {6}, w), layer_norm(x, {6}, Tensor::full({6}, 1.5, DType::f32))));
}

TEST(LayerNorm, EmptyAndNonFiniteRows) {
  testing::ReferenceOnly ref;
  EXPECT_EQ(layer_norm(Tensor::empty({0, 4}, DType::f32), {4}).shape(), (Shape{0, 4}));
  EXPECT_EQ(layer_norm(Tensor::empty({2, 0}, DType::f32), {0}).shape(), (Shape{2, 0}));
  EXPECT_EQ(layer_norm(Tensor::full({1}, 3.0, DType::f32), {1}).item(), 0.0);
  const auto y = layer_norm(Tensor::from_vector({1, INFINITY, 2, 3, 4, 5}, {2, 3}, DType::f32), {3}).to_vector();
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(y[j]));
  for (int j = 3; j < 6; ++j) EXPECT_TRUE(std::isfinite(y[j]));
}

TEST(LayerNorm, BadArgumentsNameOpAndArgument) {
  Tensor x = Tensor::zeros({3, 5}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { layer_norm(x, {3}); }, {"layer_norm", "'normalized_shape'", "[3]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { layer_norm(x, {1, 3, 5}); }, {"layer_norm", "'normalized_shape'"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { layer_norm(x, {}); }, {"layer_norm", "'normalized_shape'"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { layer_norm(x, {5}, Tensor::zeros({4}, DType::f32)); },
                                               {"layer_norm", "'weight'", "[5]", "[4]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { layer_norm(x, {5}, std::nullopt, Tensor::zeros({3, 5}, DType::f32)); },
                                               {"layer_norm", "'bias'", "[3, 5]"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { layer_norm(x, {5}, std::nullopt, Tensor::zeros({5}, DType::f64)); },
                                               {"layer_norm", "'bias'", "float64"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { layer_norm(Tensor::zeros({3, 5}, DType::boolean), {5}); },
                                               {"layer_norm", "'x'", "bool"}));
}

}  // namespace
}  // namespace fourfold
