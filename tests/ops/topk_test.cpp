// topk on the reference tier: hand cases with ties and NaN, both directions, k = 0 and k = size, layouts, errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::bit_equal;

std::vector<int64_t> int64_values(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_as<int64_t>(), c.data_as<int64_t>() + c.numel());
}

TEST(Topk, HandComputedWithTies) {
  testing::ReferenceOnly ref;
  const Tensor x = Tensor::from_vector({1, 3, 2, 3, -1}, {5}, DType::f32);
  for (bool sorted : {true, false}) {
    auto [v, i] = topk(x, 3, -1, true, sorted);
    EXPECT_TRUE(all_close(v, {3, 3, 2}, 0, 0));
    EXPECT_EQ(i.dtype(), DType::i64);
    EXPECT_EQ(int64_values(i), (std::vector<int64_t>{1, 3, 2}));   // the tie keeps the lower index first
    auto [sv, si] = topk(x, 2, 0, false, sorted);
    EXPECT_TRUE(all_close(sv, {-1, 1}, 0, 0));
    EXPECT_EQ(int64_values(si), (std::vector<int64_t>{4, 0}));
  }
  // -0 and +0 are equal: index order decides.
  auto [zv, zi] = topk(Tensor::from_vector({0.0, -0.0, 0.0}, {3}, DType::f64), 3);
  EXPECT_EQ(int64_values(zi), (std::vector<int64_t>{0, 1, 2}));
  auto [tv, ti] = topk(Tensor::from_vector({2, 5, 5, 2}, {4}, DType::f32), 4, 0, false);
  EXPECT_EQ(int64_values(ti), (std::vector<int64_t>{0, 3, 1, 2}));
}

TEST(Topk, NaNIsLargerThanEveryNumber) {
  testing::ReferenceOnly ref;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    const Tensor x = Tensor::from_vector({1, nan, inf, nan, -inf}, {5}, dtype);
    auto [v, i] = topk(x, 3);
    EXPECT_TRUE(all_close(v, {nan, nan, inf}, 0, 0)) << dtype_name(dtype);
    EXPECT_EQ(int64_values(i), (std::vector<int64_t>{1, 3, 2})) << dtype_name(dtype);
    auto [sv, si] = topk(x, 5, 0, false);
    EXPECT_TRUE(all_close(sv, {-inf, 1, inf, nan, nan}, 0, 0)) << dtype_name(dtype);
    EXPECT_EQ(int64_values(si), (std::vector<int64_t>{4, 0, 2, 1, 3})) << dtype_name(dtype);
  }
}

TEST(Topk, AlongEveryDimAndLayout) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64, DType::i32, DType::i64}) {
    // Small integers so that every dtype has ties.
    Tensor x = testing::rand_uniform({4, 6, 5}, DType::f64, 61, -4, 4).to(DType::i32).to(dtype);
    for (int dim = 0; dim < 3; ++dim) {
      const int64_t n = x.size(dim);
      auto [full_v, full_i] = topk(x, n, dim);
      auto [low_v, low_i] = topk(x, n, dim, false);
      // The full result is the row, reordered: descending (ascending), ties in index order.
      const Tensor fv = full_v.transpose(dim, 2).contiguous().to(DType::f64), fi = full_i.transpose(dim, 2).contiguous();
      const Tensor lv = low_v.transpose(dim, 2).contiguous().to(DType::f64), li = low_i.transpose(dim, 2).contiguous();
      const Tensor xr = x.transpose(dim, 2).contiguous().to(DType::f64);
      const auto fvv = fv.to_vector(), lvv = lv.to_vector(), xv = xr.to_vector();
      const auto fiv = int64_values(fi), liv = int64_values(li);
      for (size_t r = 0; r < xv.size() / n; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          const size_t at = r * n + j;
          EXPECT_EQ(fvv[at], xv[r * n + fiv[at]]);
          EXPECT_EQ(lvv[at], xv[r * n + liv[at]]);
          if (j == 0) continue;
          EXPECT_TRUE(fvv[at - 1] > fvv[at] || (fvv[at - 1] == fvv[at] && fiv[at - 1] < fiv[at]));
          EXPECT_TRUE(lvv[at - 1] < lvv[at] || (lvv[at - 1] == lvv[at] && liv[at - 1] < liv[at]));
        }
      }
      // Smaller k is the prefix; layout does not matter.
      for (int64_t k : {int64_t{0}, int64_t{1}, n - 1}) {
        auto [v, i] = topk(testing::non_contiguous(x), k, dim);
        EXPECT_TRUE(bit_equal(v, full_v.narrow(dim, 0, k).contiguous())) << dtype_name(dtype) << " dim " << dim;
        EXPECT_TRUE(bit_equal(i, full_i.narrow(dim, 0, k).contiguous())) << dtype_name(dtype) << " dim " << dim;
        EXPECT_EQ(v.size(dim), k);
      }
    }
  }
}

TEST(Topk, Int64IsOrderedExactly) {
  testing::ReferenceOnly ref;
  Tensor x = Tensor::empty({3}, DType::i64);
  const int64_t big = int64_t{1} << 53;
  x.data_as<int64_t>()[0] = big;
  x.data_as<int64_t>()[1] = big + 1;   // the same double as big
  x.data_as<int64_t>()[2] = -big;
  auto [v, i] = topk(x, 2);
  EXPECT_EQ(int64_values(v), (std::vector<int64_t>{big + 1, big}));
  EXPECT_EQ(int64_values(i), (std::vector<int64_t>{1, 0}));
}

TEST(Topk, EmptyAndScalarShapes) {
  testing::ReferenceOnly ref;
  auto [v0, i0] = topk(Tensor::empty({0, 5}, DType::f32), 2, 1);
  EXPECT_EQ(v0.shape(), (Shape{0, 2}));
  EXPECT_EQ(i0.shape(), (Shape{0, 2}));
  auto [v1, i1] = topk(Tensor::empty({3, 0}, DType::f32), 0, 1);
  EXPECT_EQ(v1.shape(), (Shape{3, 0}));
  auto [v2, i2] = topk(Tensor::zeros({3, 4}, DType::f32), 0, 0);
  EXPECT_EQ(v2.shape(), (Shape{0, 4}));
  EXPECT_EQ(i2.shape(), (Shape{0, 4}));
  for (int64_t k : {0, 1}) {
    auto [s, si] = topk(Tensor::full({}, 2.5, DType::bf16), k);
    EXPECT_EQ(s.dim(), 0);
    EXPECT_EQ(s.item(), 2.5);
    EXPECT_EQ(si.dtype(), DType::i64);
    EXPECT_EQ(si.item(), 0.0);
  }
}

TEST(Topk, BadArgumentsNameOpAndArgument) {
  const Tensor x = Tensor::zeros({2, 3}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { topk(x, 4); }, {"topk", "'k'", "4", "[0, 3]"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { topk(x, -1); }, {"topk", "'k'", "-1"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { topk(x, 3, 0); }, {"topk", "'k'", "[0, 2]"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { topk(Tensor::zeros({}, DType::f32), 2); }, {"topk", "'k'"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { topk(x, 1, 2); }, {"topk", "'dim'", "2"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { topk(Tensor::zeros({3}, DType::boolean), 1); }, {"topk", "'x'", "bool"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { topk(Tensor::zeros({3}, DType::complex64), 1); },
                                               {"topk", "'x'", "complex64"}));
}

}  // namespace
}  // namespace fourfold
