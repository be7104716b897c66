// silu on the reference tier: hand values, x * sigmoid(x) on random data in every layout, edge values, errors.
#include <cmath>
#include <limits>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

// Half an ulp of each dtype, relative: what one rounding of the exact value may cost.
double rounding(DType dtype) {
  switch (dtype) {
    case DType::bf16: return 0x1p-8;
    case DType::f16: return 0x1p-11;
    case DType::f32: return 0x1p-24;
    default: return 0x1p-50;
  }
}

TEST(Silu, HandComputedValues) {
  testing::ReferenceOnly ref;
  // silu(x) = x / (1 + e^-x): 1 / (1 + 1/e), -1 / (1 + e), 2 / (1 + e^-2).
  const double e = std::exp(1.0);
  Tensor x = Tensor::from_vector({0, 1, -1, 2}, {4}, DType::f64);
  EXPECT_TRUE(all_close(silu(x), {0, 1 / (1 + 1 / e), -1 / (1 + e), 2 / (1 + 1 / (e * e))}, 1e-15, 0));
  EXPECT_TRUE(all_close(silu(x.to(DType::f32)), {0, 0.7310585786300049, -0.2689414213699951, 1.7615941559557646},
                        1e-7, 0));
}

TEST(Silu, MatchesXTimesSigmoidInEveryLayout) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    Tensor x = randn({3, 5, 7}, dtype, 31, 4.0);
    const auto v = x.to_vector();
    std::vector<double> expected(v.size());
    for (size_t i = 0; i < v.size(); ++i) expected[i] = v[i] * (1.0 / (1.0 + std::exp(-v[i])));
    const double tol = rounding(dtype);
    Tensor y = silu(x);
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_TRUE(all_close(y, expected, tol, 1e-7)) << dtype_name(dtype);
    EXPECT_TRUE(testing::bit_equal(silu(testing::non_contiguous(x)), y)) << dtype_name(dtype);
    Tensor row = x.narrow(0, 1, 1);
    EXPECT_TRUE(testing::bit_equal(silu(row.expand({4, 5, 7})), silu(row.contiguous()).expand({4, 5, 7}).contiguous()))
        << dtype_name(dtype);
  }
}

TEST(Silu, EdgeValuesAndShapes) {
  testing::ReferenceOnly ref;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // silu(-inf) is NaN in PyTorch: its kernel computes x / (1 + exp(-x)) = -inf / inf.
  Tensor x = Tensor::from_vector({inf, -inf, nan, -1000, 1000}, {5}, DType::f32);
  EXPECT_TRUE(all_close(silu(x), {inf, nan, nan, 0, 1000}, 0, 0));
  EXPECT_EQ(silu(Tensor::empty({0, 3}, DType::bf16)).shape(), (Shape{0, 3}));
  Tensor s = silu(Tensor::full({}, 1.0, DType::f64));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_NEAR(s.item(), 0.7310585786300049, 1e-16);
}

TEST(Silu, BadArgumentsNameOpAndArgument) {
  EXPECT_TRUE(testing::throws_with<DTypeError>([] { silu(Tensor::zeros({2}, DType::i32)); }, {"silu", "'x'", "int32"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([] { silu(Tensor::zeros({2}, DType::f8_e4m3fn)); },
                                               {"silu", "'x'", "float8_e4m3fn"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([] { silu(Tensor::zeros({2}, DType::complex64)); },
                                               {"silu", "'x'", "complex64"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([] { silu(Tensor()); }, {"silu", "'x'", "undefined"}));
}

}  // namespace
}  // namespace fourfold
