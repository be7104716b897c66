// argmax on the reference tier: hand cases with NaN and ties, dim = nullopt, keepdim, layouts, empty dims, errors.
#include <cmath>
#include <cstdint>
#include <limits>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::bit_equal;

TEST(Argmax, HandComputedWithNaNAndTies) {
  testing::ReferenceOnly ref;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    const Tensor x = Tensor::from_vector({1, 5, 5, 7, nan, 2}, {2, 3}, dtype);
    Tensor rows = argmax(x, 1);
    EXPECT_EQ(rows.dtype(), DType::i64);
    ASSERT_EQ(rows.shape(), (Shape{2}));
    EXPECT_TRUE(all_close(rows, {1, 1}, 0, 0)) << dtype_name(dtype);   // first of the tied 5s; the NaN
    EXPECT_TRUE(all_close(argmax(x, 0), {1, 1, 0}, 0, 0)) << dtype_name(dtype);
    EXPECT_TRUE(all_close(argmax(x, -2), {1, 1, 0}, 0, 0)) << dtype_name(dtype);
    Tensor flat = argmax(x);
    EXPECT_EQ(flat.dim(), 0);
    EXPECT_EQ(flat.item(), 4.0);
  }
  EXPECT_EQ(argmax(Tensor::from_vector({-inf, -inf, -inf}, {3}, DType::f32)).item(), 0.0);
  EXPECT_EQ(argmax(Tensor::from_vector({1, nan, inf, nan}, {4}, DType::f32)).item(), 1.0);
  EXPECT_EQ(argmax(Tensor::from_vector({-inf, inf, 3, inf}, {4}, DType::f32)).item(), 1.0);
  EXPECT_EQ(argmax(Tensor::from_vector({-0.0, 0.0}, {2}, DType::f32)).item(), 0.0);
  EXPECT_EQ(argmax(Tensor::from_vector({3, -2, 9, 9}, {4}, DType::i32)).item(), 2.0);
}

TEST(Argmax, KeepdimShapes) {
  testing::ReferenceOnly ref;
  const Tensor x = Tensor::from_vector({1, 5, 2, 7, 0, 2}, {2, 3}, DType::f32);
  Tensor k1 = argmax(x, 1, true);
  ASSERT_EQ(k1.shape(), (Shape{2, 1}));
  EXPECT_TRUE(all_close(k1, {1, 0}, 0, 0));
  EXPECT_EQ(argmax(x, 0, true).shape(), (Shape{1, 3}));
  Tensor all = argmax(x, std::nullopt, true);
  ASSERT_EQ(all.shape(), (Shape{1, 1}));
  EXPECT_EQ(all.item(), 3.0);
  Tensor s = argmax(Tensor::full({}, 4.0, DType::f32), 0);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item(), 0.0);
  EXPECT_EQ(argmax(Tensor::full({}, 4.0, DType::f32), -1, true).dim(), 0);
}

TEST(Argmax, MatchesTopkOfOneInEveryDimAndLayout) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64, DType::i32, DType::i64}) {
    // Few distinct values so that ties are common.
    Tensor x = testing::rand_uniform({3, 5, 7}, DType::f64, 71, -3, 3).to(DType::i32).to(dtype);
    for (int dim = 0; dim < 3; ++dim) {
      Tensor expected = topk(x, 1, dim).second;
      EXPECT_TRUE(bit_equal(argmax(x, dim, true), expected)) << dtype_name(dtype) << " dim " << dim;
      EXPECT_TRUE(bit_equal(argmax(testing::non_contiguous(x), dim, true), expected)) << dtype_name(dtype);
      EXPECT_TRUE(bit_equal(argmax(x, dim), expected.squeeze(dim).contiguous())) << dtype_name(dtype);
    }
    // Flattened: the first position of the maximum in row-major order, whatever the layout.
    Tensor flat_expected = topk(x.reshape({-1}), 1).second.reshape({});
    EXPECT_TRUE(bit_equal(argmax(testing::non_contiguous(x)), flat_expected)) << dtype_name(dtype);
    // A broadcast (stride-0) input: every row is the same, so is every answer.
    Tensor row = x.narrow(0, 0, 1);
    EXPECT_TRUE(bit_equal(argmax(row.expand({4, 5, 7}), 2), argmax(row, 2).expand({4, 5}).contiguous()));
  }
}

TEST(Argmax, Int64IsComparedExactly) {
  testing::ReferenceOnly ref;
  const int64_t big = int64_t{1} << 53;
  Tensor x = Tensor::empty({3}, DType::i64);
  x.data_as<int64_t>()[0] = big;
  x.data_as<int64_t>()[1] = big + 1;   // rounds to the same double as big
  x.data_as<int64_t>()[2] = big - 1;
  EXPECT_EQ(argmax(x).item(), 1.0);
}

TEST(Argmax, EmptyDims) {
  testing::ReferenceOnly ref;
  Tensor e = argmax(Tensor::empty({0, 3}, DType::f32), 1);
  EXPECT_EQ(e.shape(), (Shape{0}));
  EXPECT_EQ(argmax(Tensor::empty({0, 3}, DType::f32), 1, true).shape(), (Shape{0, 1}));
  // PyTorch refuses to reduce an empty dim: argmax has no identity.
  EXPECT_TRUE(testing::throws_with<ValueError>([] { argmax(Tensor::empty({0, 3}, DType::f32), 0); },
                                               {"argmax", "'dim'", "[0, 3]"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([] { argmax(Tensor::empty({2, 0}, DType::f32)); },
                                               {"argmax", "'x'", "[2, 0]"}));
}

TEST(Argmax, BadArgumentsNameOpAndArgument) {
  const Tensor x = Tensor::zeros({2, 3}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { argmax(x, 2); }, {"argmax", "'dim'", "2"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([] { argmax(Tensor::zeros({3}, DType::boolean)); },
                                               {"argmax", "'x'", "bool"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([] { argmax(Tensor::zeros({3}, DType::f8_e5m2)); },
                                               {"argmax", "'x'", "float8_e5m2"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([] { argmax(Tensor()); }, {"argmax", "'x'", "undefined"}));
}

}  // namespace
}  // namespace fourfold
