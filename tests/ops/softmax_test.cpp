// softmax / log_softmax and their backward on the reference tier: hand cases, identities, edge values, errors.
#include <cmath>
#include <limits>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

TEST(Softmax, HandComputedRow) {
  testing::ReferenceOnly ref;
  Tensor x = Tensor::from_vector({0.0, std::log(2.0), std::log(5.0)}, {3}, DType::f32);
  EXPECT_TRUE(all_close(softmax(x, 0), {1.0 / 8, 2.0 / 8, 5.0 / 8}, 1e-6, 0));
  EXPECT_TRUE(all_close(log_softmax(x, -1), {std::log(1.0 / 8), std::log(2.0 / 8), std::log(5.0 / 8)}, 1e-6, 0));
}

TEST(Softmax, RowsSumToOneAlongEveryDimAndLayout) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    Tensor x = randn({3, 5, 7}, dtype, 11, 3.0);
    for (int dim = 0; dim < 3; ++dim) {
      for (const Tensor& input : {x, testing::non_contiguous(x)}) {
        Tensor y = softmax(input, dim).to(DType::f64);
        Shape reduced = y.shape();
        std::vector<double> v = y.to_vector();
        // sum over dim via a permuted view
        std::vector<int> perm = {0, 1, 2};
        std::swap(perm[dim], perm[2]);
        Tensor p = y.permute(perm).contiguous();
        const int64_t n = p.size(2);
        const auto pv = p.to_vector();
        for (size_t r = 0; r < pv.size() / n; ++r) {
          double s = 0;
          for (int64_t j = 0; j < n; ++j) s += pv[r * n + j];
          EXPECT_NEAR(s, 1.0, dtype == DType::f64 ? 1e-12 : 2e-2) << dtype_name(dtype) << " dim " << dim;
        }
      }
    }
  }
}

TEST(Softmax, AllNegativeInfinityRowIsNaNAndNaNPropagates) {
  testing::ReferenceOnly ref;
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = Tensor::from_vector({-inf, -inf, 1.0, NAN, 0.0, 1.0, 2.0, -inf}, Shape{2, 4}, DType::f32);
  const auto y = softmax(x, 1).to_vector();
  for (int j = 0; j < 4; ++j) EXPECT_TRUE(std::isnan(y[j]));   // row 0 has a NaN
  EXPECT_EQ(y[7], 0.0);                                         // exp(-inf) = 0 in a finite row
  Tensor all_inf = Tensor::full({1, 5}, -inf, DType::f32);
  for (double v : softmax(all_inf, 1).to_vector()) EXPECT_TRUE(std::isnan(v));
  for (double v : log_softmax(all_inf, 1).to_vector()) EXPECT_TRUE(std::isnan(v));
}

TEST(Softmax, EmptyAndScalarInputs) {
  testing::ReferenceOnly ref;
  EXPECT_EQ(softmax(Tensor::empty({0, 4}, DType::f32), 1).shape(), (Shape{0, 4}));
  EXPECT_EQ(softmax(Tensor::empty({4, 0}, DType::f32), 1).shape(), (Shape{4, 0}));
  Tensor s = softmax(Tensor::full({}, 3.0, DType::f32), 0);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item(), 1.0);
}

TEST(Softmax, BackwardMatchesFiniteDifferences) {
  testing::ReferenceOnly ref;
  Tensor x = randn({2, 5}, DType::f64, 3);
  Tensor g = randn({2, 5}, DType::f64, 4);
  for (bool log : {false, true}) {
    auto f = [&](const Tensor& xi) { return testing::dot(log ? log_softmax(xi, 1) : softmax(xi, 1), g); };
    Tensor y = log ? log_softmax(x, 1) : softmax(x, 1);
    Tensor analytic = log ? log_softmax_backward(g, y, 1) : softmax_backward(g, y, 1);
    EXPECT_TRUE(all_close(analytic, testing::finite_difference(f, x), 1e-6, 1e-8)) << (log ? "log_softmax" : "softmax");
  }
}

TEST(Softmax, BadArgumentsNameOpAndArgument) {
  Tensor i = Tensor::zeros({2, 2}, DType::i32);
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { softmax(i, 1); }, {"softmax", "'x'", "int32"}));
  Tensor x = Tensor::zeros({2, 2}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { softmax(x, 2); }, {"softmax", "'dim'", "2"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { softmax_backward(Tensor::zeros({2, 3}, DType::f32), x, 1); }, {"softmax_backward", "'grad_out'"}));
}

}  // namespace
}  // namespace fourfold
