// gelu (erf and tanh forms) on the reference tier: hand values, identities on random data, edge values, errors.
#include <cmath>
#include <limits>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

constexpr GeluApproximate kNone = GeluApproximate::none;
constexpr GeluApproximate kTanh = GeluApproximate::tanh;

TEST(Gelu, HandComputedValues) {
  testing::ReferenceOnly ref;
  // x * Phi(x): Phi(1) = 0.8413447460685429, Phi(2) = 0.9772498680518208, Phi(0.5) = 0.6914624612740131.
  Tensor x = Tensor::from_vector({0, 1, -1, 2, 0.5}, {5}, DType::f64);
  EXPECT_TRUE(all_close(gelu(x), {0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416, 0.34573123063700656},
                        1e-15, 0));
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  EXPECT_TRUE(all_close(gelu(x, kTanh),
                        {0, 0.8411919906082768, -0.15880800939172324, 1.954597694087775, 0.34571400982514394}, 1e-15, 0));
  EXPECT_TRUE(all_close(gelu(x.to(DType::f32)), {0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416,
                                                 0.34573123063700656}, 1e-7, 0));
}

TEST(Gelu, OddPartIsIdentityAndTanhFormIsClose) {
  testing::ReferenceOnly ref;
  // Phi(x) + Phi(-x) = 1 (and tanh is odd), so gelu(x) - gelu(-x) = x for both forms.
  Tensor x = randn({4, 9}, DType::f64, 41, 3.0);
  Tensor neg = mul(x, Tensor::full({}, -1.0, DType::f64));
  for (GeluApproximate form : {kNone, kTanh}) {
    Tensor odd = add(gelu(x, form), gelu(neg, form), -1.0);
    EXPECT_TRUE(all_close(odd, x, 1e-13, 1e-15));
  }
  // The tanh approximation stays within 5e-4 of the exact form everywhere.
  EXPECT_TRUE(all_close(gelu(x, kTanh), gelu(x, kNone), 0, 5e-4));
}

TEST(Gelu, EveryDtypeAndLayout) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    Tensor x = randn({3, 5, 7}, dtype, 42, 3.0);
    for (GeluApproximate form : {kNone, kTanh}) {
      Tensor y = gelu(x, form);
      EXPECT_EQ(y.dtype(), dtype);
      // One rounding of the float64 result.
      EXPECT_TRUE(testing::bit_equal(y, gelu(x.to(DType::f64), form).to(dtype))) << dtype_name(dtype);
      EXPECT_TRUE(testing::bit_equal(gelu(testing::non_contiguous(x), form), y)) << dtype_name(dtype);
    }
    Tensor row = x.narrow(1, 2, 1);
    EXPECT_TRUE(testing::bit_equal(gelu(row.expand({3, 6, 7})), gelu(row).expand({3, 6, 7}).contiguous()));
  }
}

TEST(Gelu, EdgeValuesAndShapes) {
  testing::ReferenceOnly ref;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // As PyTorch's formula gives: gelu(-inf) = -inf * 0 = NaN in both forms.
  Tensor x = Tensor::from_vector({inf, -inf, nan, -100, 100}, {5}, DType::f32);
  EXPECT_TRUE(all_close(gelu(x), {inf, nan, nan, 0, 100}, 0, 0));
  EXPECT_TRUE(all_close(gelu(x, kTanh), {inf, nan, nan, 0, 100}, 0, 0));
  EXPECT_EQ(gelu(Tensor::empty({2, 0}, DType::f16)).shape(), (Shape{2, 0}));
  EXPECT_EQ(gelu(Tensor::full({}, 1.0, DType::f32)).dim(), 0);
}

TEST(Gelu, BadArgumentsNameOpAndArgument) {
  EXPECT_TRUE(testing::throws_with<DTypeError>([] { gelu(Tensor::zeros({2}, DType::i32)); }, {"gelu", "'x'", "int32"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([] { gelu(Tensor::zeros({2}, DType::boolean), kTanh); },
                                               {"gelu", "'x'", "bool"}));
  EXPECT_TRUE(testing::throws_with<ValueError>(
      [] { gelu(Tensor::zeros({2}, DType::f32), static_cast<GeluApproximate>(7)); }, {"gelu", "'approximate'", "7"}));
}

}  // namespace
}  // namespace fourfold
