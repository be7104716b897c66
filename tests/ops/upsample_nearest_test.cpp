// upsample_nearest on the reference tier: hand cases, integer scales as repeats, the floor(dst * in / out)
// rule on non-integer sizes, every dtype and layout, and bad arguments.
#include <cstring>
#include <random>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::bit_equal;

using testing::kAllDTypes;

using testing::random_bits;

// Byte by byte against the rule: out[n, c, *dst] = x[n, c, *floor(dst * in / out)].
::testing::AssertionResult matches_nearest_rule(const Tensor& x, const Tensor& out) {
  const int rank = x.dim();
  if (out.dim() != rank || out.size(0) != x.size(0) || out.size(1) != x.size(1) || out.dtype() != x.dtype())
    return ::testing::AssertionFailure() << out.describe() << " does not fit " << x.describe();
  int64_t bad = 0;
  std::vector<int64_t> src(rank);
  for_each_index(out.shape(), [&](const int64_t* dst) {
    for (int d = 0; d < rank; ++d) src[d] = d < 2 ? dst[d] : dst[d] * x.size(d) / out.size(d);
    if (std::memcmp(out.element_ptr({dst, static_cast<size_t>(rank)}), x.element_ptr(src), dtype_size(x.dtype())))
      ++bad;
  });
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " elements differ";
}

TEST(UpsampleNearest, HandComputedCases) {
  testing::ReferenceOnly ref;
  // 3 -> 5: sources floor(0, 0.6, 1.2, 1.8, 2.4) = 0, 0, 1, 1, 2.
  Tensor v = Tensor::from_vector({1, 2, 3}, {1, 1, 3}, DType::f32);
  EXPECT_TRUE(all_close(upsample_nearest(v, {5}), {1, 1, 2, 2, 3}, 0, 0));
  // 3 -> 2 (downsampling): sources 0 and floor(1.5) = 1.
  EXPECT_TRUE(all_close(upsample_nearest(v, {2}), {1, 2}, 0, 0));
  // 2x2 -> 3x3: rows and columns from sources 0, 0, 1.
  Tensor m = Tensor::from_vector({1, 2, 3, 4}, {1, 1, 2, 2}, DType::f32);
  EXPECT_TRUE(all_close(upsample_nearest(m, {3, 3}), {1, 1, 2, 1, 1, 2, 3, 3, 4}, 0, 0));
  // 2x2 -> 1x4: one row (source 0), columns 0, 0, 1, 1.
  EXPECT_TRUE(all_close(upsample_nearest(m, {1, 4}), {1, 1, 2, 2}, 0, 0));
  // The exact floor, not PyTorch's float32 scale: 2 -> 82 at dst 41 is source 1 (41 * 2 / 82 = 1); float32
  // rounds 2/82 down and gives 0. ops.h defines the exact rule.
  Tensor two = Tensor::from_vector({5, 6}, {1, 1, 2}, DType::f32);
  EXPECT_EQ(upsample_nearest(two, {82}).narrow(2, 41, 1).item(), 6.0);
}

TEST(UpsampleNearest, IntegerScaleIsARepeat) {
  testing::ReferenceOnly ref;
  // 1-D: [N, C, L] -> [N, C, 3L] repeats every element 3 times.
  Tensor x1 = testing::randn({2, 3, 4}, DType::f32, 1);
  EXPECT_TRUE(bit_equal(upsample_nearest(x1, {12}), x1.unsqueeze(3).expand({2, 3, 4, 3}).reshape({2, 3, 12})));
  // 2-D with scales (2, 3).
  Tensor x2 = testing::randn({1, 2, 3, 4}, DType::bf16, 2);
  Tensor r2 = x2.unsqueeze(3).unsqueeze(5).expand({1, 2, 3, 2, 4, 3}).reshape({1, 2, 6, 12});
  EXPECT_TRUE(bit_equal(upsample_nearest(x2, {6, 12}), r2));
  // 3-D with scales (2, 1, 4).
  Tensor x3 = testing::randn({1, 2, 2, 3, 2}, DType::f16, 3);
  Tensor r3 = x3.unsqueeze(3).unsqueeze(6).expand({1, 2, 2, 2, 3, 2, 4}).reshape({1, 2, 4, 3, 8});
  EXPECT_TRUE(bit_equal(upsample_nearest(x3, {4, 3, 8}), r3));
  // Scale 1 is the identity.
  EXPECT_TRUE(bit_equal(upsample_nearest(x3, {2, 3, 2}), x3));
}

TEST(UpsampleNearest, NonIntegerSizesFollowTheFloorRule) {
  testing::ReferenceOnly ref;
  uint64_t seed = 10;
  for (const auto& [in, out] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
           {{2, 3, 7}, {10}},
           {{2, 3, 10}, {7}},
           {{1, 2, 5, 3}, {8, 7}},
           {{1, 1, 7, 9}, {3, 20}},
           {{1, 2, 3, 5, 4}, {7, 2, 9}},
           {{1, 1, 2, 2, 3}, {82, 3, 94}},   // ratios where PyTorch's float32 scale would pick a lower source
       }) {
    Tensor x = random_bits(in, DType::f32, ++seed);
    EXPECT_TRUE(matches_nearest_rule(x, upsample_nearest(x, out))) << shape_string(in);
  }
}

TEST(UpsampleNearest, EveryDtypeAndLayout) {
  testing::ReferenceOnly ref;
  uint64_t seed = 20;
  for (DType dtype : kAllDTypes) {
    Tensor x = random_bits({2, 3, 4, 5}, dtype, ++seed);
    const Tensor y = upsample_nearest(x, {7, 3});
    EXPECT_TRUE(matches_nearest_rule(x, y)) << dtype_name(dtype);
    EXPECT_TRUE(bit_equal(upsample_nearest(testing::non_contiguous(x), {7, 3}), y)) << dtype_name(dtype);
    // Stride-0 input: one image broadcast over batch and channels.
    Tensor one = random_bits({1, 1, 4, 5}, dtype, ++seed).expand({2, 3, 4, 5});
    EXPECT_TRUE(bit_equal(upsample_nearest(one, {9, 10}), upsample_nearest(one.contiguous(), {9, 10})));
    EXPECT_TRUE(matches_nearest_rule(one, upsample_nearest(one, {9, 10}))) << dtype_name(dtype);
  }
  // Empty batch or channels: nothing to copy, the shape still follows.
  EXPECT_EQ(upsample_nearest(Tensor::empty({0, 3, 4}, DType::f32), {6}).shape(), (Shape{0, 3, 6}));
  EXPECT_EQ(upsample_nearest(Tensor::empty({2, 0, 4, 4}, DType::f32), {1, 2}).shape(), (Shape{2, 0, 1, 2}));
}

TEST(UpsampleNearest, BadArgumentsNameOpAndArgument) {
  using testing::throws_with;
  const char* op = "upsample_nearest";
  EXPECT_TRUE(throws_with<ShapeError>([&] { upsample_nearest(Tensor::zeros({2, 3}, DType::f32), {4}); },
                                      {op, "'x'", "1 to 3 spatial"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { upsample_nearest(Tensor::zeros({1, 1, 2, 2, 2, 2}, DType::f32), {4, 4, 4, 4}); },
                                      {op, "'x'", "[1, 1, 2, 2, 2, 2]"}));
  const Tensor x = Tensor::zeros({1, 2, 3, 4}, DType::f32);
  EXPECT_TRUE(throws_with<ValueError>([&] { upsample_nearest(x, {6}); }, {op, "'output_size'", "2 sizes", "[6]"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { upsample_nearest(x, {6, 8, 2}); }, {op, "'output_size'", "2 sizes"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { upsample_nearest(x, {6, 0}); }, {op, "'output_size'", ">= 1"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { upsample_nearest(x, {-1, 3}); }, {op, "'output_size'", ">= 1"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { upsample_nearest(Tensor::zeros({1, 2, 0, 4}, DType::f32), {3, 3}); },
                                      {op, "'x'", "dim 2"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { upsample_nearest(Tensor(), {3}); }, {op, "'x'"}));
}

}  // namespace
}  // namespace fourfold
