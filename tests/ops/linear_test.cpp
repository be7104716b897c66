// linear and linear_backward on the reference tier: hand cases, identities, layouts, edge values, errors.
#include <cmath>
#include <limits>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

using Tol = testing::Tolerance;
Tol tolerance(DType dtype) { return testing::product_tolerance(dtype); }

// out[m, n] = sum_k x[m, k] w[n, k] + b[n] over the values as stored, in double, by explicit loops.
std::vector<double> hand_linear(const Tensor& x2, const Tensor& w, const Tensor* b) {
  const auto xv = x2.to_vector(), wv = w.to_vector();
  const auto bv = b ? b->to_vector() : std::vector<double>{};
  const int64_t m_size = x2.size(0), k_size = x2.size(1), n_size = w.size(0);
  std::vector<double> out;
  for (int64_t m = 0; m < m_size; ++m)
    for (int64_t n = 0; n < n_size; ++n) {
      double acc = b ? bv[n] : 0.0;
      for (int64_t k = 0; k < k_size; ++k) acc += xv[m * k_size + k] * wv[n * k_size + k];
      out.push_back(acc);
    }
  return out;
}

TEST(Linear, HandComputed) {
  testing::ReferenceOnly ref;
  Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, DType::f32);
  Tensor w = Tensor::from_vector({1, 0, -1, 0.5, 0.5, 0.5}, {2, 3}, DType::f32);
  Tensor b = Tensor::from_vector({10, -1}, {2}, DType::f32);
  EXPECT_TRUE(all_close(linear(x, w, b), {8, 2, 8, 6.5}, 0, 0));
  EXPECT_TRUE(all_close(linear(x, w), {-2, 3, -2, 7.5}, 0, 0));
}

TEST(Linear, EqualsHandMatmulWithBiasForEveryDtypeAndLayout) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    const Tol tol = tolerance(dtype);
    Tensor x = randn({2, 3, 7}, dtype, 1);
    Tensor w = randn({5, 7}, dtype, 2);
    Tensor b = randn({5}, dtype, 3);
    const auto expected = hand_linear(x.reshape({6, 7}), w, &b);
    for (bool strided : {false, true}) {
      const Tensor xi = strided ? testing::non_contiguous(x) : x;
      const Tensor wi = strided ? testing::non_contiguous(w) : w;
      const Tensor bi = strided ? testing::non_contiguous(b) : b;
      Tensor y = linear(xi, wi, bi);
      EXPECT_EQ(y.shape(), (Shape{2, 3, 5}));
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_TRUE(all_close(y, expected, tol.rtol, tol.atol)) << dtype_name(dtype) << " strided " << strided;
    }
    // Without bias, and a 1-D input ([K] -> [N]).
    EXPECT_TRUE(all_close(linear(x, w), hand_linear(x.reshape({6, 7}), w, nullptr), tol.rtol, tol.atol));
    Tensor x1 = x.select(0, 1).select(0, 2);
    Tensor y1 = linear(x1, w, b);
    EXPECT_EQ(y1.shape(), (Shape{5}));
    EXPECT_TRUE(all_close(y1, hand_linear(x1.reshape({1, 7}), w, &b), tol.rtol, tol.atol));
  }
}

TEST(Linear, BroadcastInputsAndSizeOneAndOddShapes) {
  testing::ReferenceOnly ref;
  // x expanded from one row (stride 0 on the leading dims), weight and bias expanded from one row and value.
  Tensor row = randn({1, 9}, DType::f32, 4);
  Tensor x = row.expand({4, 9});
  Tensor w = randn({1, 9}, DType::f32, 5).expand({3, 9});
  Tensor b = Tensor::full({1}, 0.25, DType::f32).expand({3});
  const auto expected = hand_linear(x.contiguous(), w.contiguous(), &b);
  EXPECT_TRUE(all_close(linear(x, w, b), expected, 1e-6, 1e-6));
  Tensor one = linear(randn({1, 1}, DType::f32, 6), Tensor::full({1, 1}, 2.0, DType::f32));
  EXPECT_EQ(one.shape(), (Shape{1, 1}));
  Tensor xs = randn({3, 1, 13}, DType::bf16, 7), ws = randn({11, 13}, DType::bf16, 8);
  EXPECT_TRUE(all_close(linear(xs, ws), hand_linear(xs.reshape({3, 13}), ws, nullptr), 4e-3, 1e-3));
}

TEST(Linear, EmptyDims) {
  testing::ReferenceOnly ref;
  Tensor w = randn({4, 3}, DType::f32, 9);
  EXPECT_EQ(linear(Tensor::empty({0, 3}, DType::f32), w).shape(), (Shape{0, 4}));
  EXPECT_EQ(linear(Tensor::empty({2, 0, 3}, DType::f32), w).shape(), (Shape{2, 0, 4}));
  EXPECT_EQ(linear(randn({2, 3}, DType::f32, 10), Tensor::empty({0, 3}, DType::f32)).shape(), (Shape{2, 0}));
  // K = 0: the sum is empty, so every output is its bias.
  Tensor b = Tensor::from_vector({1, 2}, {2}, DType::f32);
  EXPECT_TRUE(all_close(linear(Tensor::empty({3, 0}, DType::f32), Tensor::empty({2, 0}, DType::f32), b),
                        {1, 2, 1, 2, 1, 2}, 0, 0));
}

TEST(Linear, InfAndNaNPropagate) {
  testing::ReferenceOnly ref;
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = Tensor::from_vector({inf, 1, 2, NAN}, {2, 2}, DType::f32);
  Tensor w = Tensor::from_vector({1, 0, 0, 1}, {2, 2}, DType::f32);
  const auto y = linear(x, w).to_vector();
  EXPECT_EQ(y[0], inf);               // inf * 1 + 1 * 0
  EXPECT_TRUE(std::isnan(y[1]));      // inf * 0
  EXPECT_TRUE(std::isnan(y[2]));      // NaN * 0
  EXPECT_TRUE(std::isnan(y[3]));
  Tensor big = Tensor::full({1, 2}, 60000.0, DType::f16);
  EXPECT_EQ(linear(big, Tensor::full({1, 2}, 1.0, DType::f16)).item(), inf);   // 120000 overflows f16
}

TEST(Linear, BadArgumentsNameOpAndArgument) {
  Tensor x = Tensor::zeros({2, 3}, DType::f32), w = Tensor::zeros({4, 3}, DType::f32);
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { linear(Tensor::zeros({2, 3}, DType::i32), w); },
                                               {"linear", "'x'", "int32"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { linear(Tensor::zeros({2, 3}, DType::f8_e4m3fn), w); },
                                               {"linear", "'x'", "float8_e4m3fn"}));
  // Low-precision weight storage is allowed under f32 x only, never the other way round.
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { linear(Tensor::zeros({2, 3}, DType::bf16), Tensor::zeros({4, 3}, DType::f32)); },
      {"linear", "'weight'", "bfloat16", "float32"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { linear(x, Tensor::zeros({4, 3}, DType::f8_e4m3fn)); },
                                               {"linear", "'weight'", "float8_e4m3fn"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { linear(x, w, Tensor::zeros({4}, DType::f16)); },
                                               {"linear", "'bias'", "float16"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { linear(Tensor::zeros({}, DType::f32), w); }, {"linear", "'x'"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { linear(x, Tensor::zeros({4, 3, 1}, DType::f32)); },
                                               {"linear", "'weight'", "2-D", "[4, 3, 1]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { linear(x, Tensor::zeros({4, 5}, DType::f32)); },
                                               {"linear", "'weight'", "size 3", "[4, 5]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { linear(x, w, Tensor::zeros({3}, DType::f32)); },
                                               {"linear", "'bias'", "size 4", "[3]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { linear(x, w, Tensor::zeros({1, 4}, DType::f32)); },
                                               {"linear", "'bias'", "1-D"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { linear(x, Tensor()); }, {"linear", "'weight'", "undefined"}));
}

TEST(LinearBackward, MatchesFiniteDifferences) {
  testing::ReferenceOnly ref;
  Tensor x = randn({2, 3, 4}, DType::f64, 11);
  Tensor w = randn({5, 4}, DType::f64, 12);
  Tensor b = randn({5}, DType::f64, 13);
  Tensor g = randn({2, 3, 5}, DType::f64, 14);
  const LinearGrads grads = linear_backward(g, x, w, true);
  ASSERT_EQ(grads.grad_x.shape(), x.shape());
  ASSERT_EQ(grads.grad_weight.shape(), w.shape());
  ASSERT_EQ(grads.grad_bias.shape(), b.shape());
  auto fx = [&](const Tensor& xi) { return testing::dot(linear(xi, w, b), g); };
  auto fw = [&](const Tensor& wi) { return testing::dot(linear(x, wi, b), g); };
  auto fb = [&](const Tensor& bi) { return testing::dot(linear(x, w, bi), g); };
  EXPECT_TRUE(all_close(grads.grad_x, testing::finite_difference(fx, x), 1e-6, 1e-8));
  EXPECT_TRUE(all_close(grads.grad_weight, testing::finite_difference(fw, w), 1e-6, 1e-8));
  EXPECT_TRUE(all_close(grads.grad_bias, testing::finite_difference(fb, b), 1e-6, 1e-8));
  EXPECT_FALSE(linear_backward(g, x, w, false).grad_bias.defined());
}

TEST(LinearBackward, LowPrecisionAndStridedMatchFloat64) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
    const Tol tol = tolerance(dtype);
    Tensor x = randn({3, 6}, dtype, 15), w = randn({4, 6}, dtype, 16), g = randn({3, 4}, dtype, 17);
    const LinearGrads want = linear_backward(g.to(DType::f64), x.to(DType::f64), w.to(DType::f64), true);
    const LinearGrads got =
        linear_backward(testing::non_contiguous(g), testing::non_contiguous(x), testing::non_contiguous(w), true);
    EXPECT_EQ(got.grad_x.dtype(), dtype);
    EXPECT_TRUE(all_close(got.grad_x, want.grad_x, tol.rtol, tol.atol)) << dtype_name(dtype);
    EXPECT_TRUE(all_close(got.grad_weight, want.grad_weight, tol.rtol, tol.atol)) << dtype_name(dtype);
    EXPECT_TRUE(all_close(got.grad_bias, want.grad_bias, tol.rtol, tol.atol)) << dtype_name(dtype);
  }
  // No rows: grad_weight and grad_bias are empty sums, hence zeros.
  const LinearGrads empty = linear_backward(Tensor::empty({0, 4}, DType::f32), Tensor::empty({0, 3}, DType::f32),
                                            Tensor::full({4, 3}, 1.0, DType::f32), true);
  EXPECT_TRUE(all_close(empty.grad_weight, std::vector<double>(12, 0.0), 0, 0));
  EXPECT_TRUE(all_close(empty.grad_bias, std::vector<double>(4, 0.0), 0, 0));
}

TEST(LinearBackward, BadArgumentsNameOpAndArgument) {
  Tensor x = Tensor::zeros({2, 3}, DType::f32), w = Tensor::zeros({4, 3}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { linear_backward(Tensor::zeros({2, 3}, DType::f32), x, w, true); },
                                               {"linear_backward", "'grad_out'", "[2, 4]", "[2, 3]"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { linear_backward(Tensor::zeros({2, 4}, DType::bf16), x, w, true); },
                                               {"linear_backward", "'grad_out'", "bfloat16"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { linear_backward(Tensor::zeros({2, 4}, DType::f32), x, Tensor::zeros({4, 2}, DType::f32), true); },
      {"linear_backward", "'weight'"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { linear_backward(Tensor::zeros({2, 4}, DType::i64), Tensor::zeros({2, 3}, DType::i64), w, true); },
      {"linear_backward", "'x'", "int64"}));
}

}  // namespace
}  // namespace fourfold
