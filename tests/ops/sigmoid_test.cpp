// sigmoid on the reference tier: hand values, 1 / (1 + exp(-x)) on random data in every layout, edge values,
// errors.
#include <cmath>
#include <limits>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

TEST(Sigmoid, HandComputedValues) {
  testing::ReferenceOnly ref;
  const double e = std::exp(1.0);
  Tensor x = Tensor::from_vector({0, 1, -1, 2}, {4}, DType::f64);
  EXPECT_TRUE(all_close(sigmoid(x), {0.5, 1 / (1 + 1 / e), 1 / (1 + e), 1 / (1 + 1 / (e * e))}, 1e-15, 0));
  EXPECT_TRUE(all_close(sigmoid(x.to(DType::f32)), {0.5, 0.7310585786300049, 0.2689414213699951, 0.8807970779778823},
                        1e-7, 0));
}

TEST(Sigmoid, MatchesTheLogisticInEveryLayout) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    Tensor x = randn({3, 5, 7}, dtype, 41, 4.0);
    const auto v = x.to_vector();
    std::vector<double> expected(v.size());
    for (size_t i = 0; i < v.size(); ++i) expected[i] = 1.0 / (1.0 + std::exp(-v[i]));
    // Half an ulp of the dtype, relative: one rounding of the exact value.
    const double tol = dtype == DType::bf16 ? 0x1p-8 : dtype == DType::f16 ? 0x1p-11 : dtype == DType::f32 ? 0x1p-24 : 0x1p-50;
    // f16's far left tail is subnormal: half its spacing there, absolute.
    const double atol = dtype == DType::f16 ? 0x1p-25 : 0.0;
    Tensor y = sigmoid(x);
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_TRUE(all_close(y, expected, tol, atol)) << dtype_name(dtype);
    EXPECT_TRUE(testing::bit_equal(sigmoid(testing::non_contiguous(x)), y)) << dtype_name(dtype);
  }
}

TEST(Sigmoid, EdgeValuesAndShapes) {
  testing::ReferenceOnly ref;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // torch.sigmoid: 0 at -inf, 1 at inf, NaN stays NaN; far tails round to 0 and 1.
  Tensor x = Tensor::from_vector({inf, -inf, nan, -1000, 1000}, {5}, DType::f32);
  EXPECT_TRUE(all_close(sigmoid(x), {1, 0, nan, 0, 1}, 0, 0));
  EXPECT_EQ(sigmoid(Tensor::empty({0, 3}, DType::bf16)).shape(), (Shape{0, 3}));
  Tensor s = sigmoid(Tensor::full({}, 0.0, DType::f64));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item(), 0.5);
}

TEST(Sigmoid, BadArgumentsNameOpAndArgument) {
  EXPECT_TRUE(testing::throws_with<DTypeError>([] { sigmoid(Tensor::zeros({2}, DType::i64)); }, {"sigmoid", "'x'", "int64"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([] { sigmoid(Tensor::zeros({2}, DType::f8_e4m3fn)); },
                                               {"sigmoid", "'x'", "float8_e4m3fn"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([] { sigmoid(Tensor()); }, {"sigmoid", "'x'", "undefined"}));
}

}  // namespace
}  // namespace fourfold
