// upsample_nearest on the generic and dedicated tiers against the reference: integer factors in 1 to 3
// spatial dims, several dtypes, bit for bit (it is a copy); other factors and strided inputs fall back.
#include <gtest/gtest.h>

#include "backends/tier_check.h"
#include "fourfold/ops.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using tier_check::expect_matches;
using tier_check::Outputs;

struct Case {
  Shape x;
  std::vector<int64_t> out;
};

const Case kCases[] = {
    {{2, 3, 5}, {15}},                       // 1-D, factor 3
    {{1, 4, 6, 7}, {12, 14}},                // the VAE's 2x
    {{2, 2, 3, 4, 5}, {3, 8, 10}},           // 3-D, time kept
    {{1, 3, 2, 3, 4}, {4, 9, 4}},            // 3-D, every dim its own factor
    {{1, 1, 1, 1}, {5, 3}},                  // a single pixel
};

TEST(UpsampleNearestTiers, IntegerFactorsMatchTheReferenceBitForBit) {
  for (DType dt : {DType::f32, DType::bf16, DType::i64})
    for (const Case& c : kCases) {
      const Tensor x = testing::randn(c.x, DType::f32, 3).to(dt);
      const auto fn = [&] { return Outputs{upsample_nearest(x, c.out)}; };
      const std::string what = shape_string(c.x) + " " + std::string(dtype_name(dt));
      expect_matches("upsample_nearest", Tier::generic, fn, {0, 0}, what);
      expect_matches("upsample_nearest", Tier::dedicated, fn, {0, 0}, what);
    }
}

TEST(UpsampleNearestTiers, OtherFactorsAndStridedInputsFallBack) {
  const Tensor x = testing::randn({1, 2, 4, 6}, DType::f32, 5);
  // 4 -> 6 is not an integer factor: both faster tiers leave it to the reference.
  const auto odd = [&] { return Outputs{upsample_nearest(x, {6, 12})}; };
  expect_matches("upsample_nearest", Tier::generic, odd, {0, 0}, "4 -> 6", /*covered=*/false);
  expect_matches("upsample_nearest", Tier::dedicated, odd, {0, 0}, "4 -> 6", /*covered=*/false);
  // A transposed input: the generic tier's strided copy takes it, the dedicated one leaves it.
  const Tensor t = x.transpose(2, 3);
  const auto strided = [&] { return Outputs{upsample_nearest(t, {12, 8})}; };
  expect_matches("upsample_nearest", Tier::generic, strided, {0, 0}, "transposed");
  expect_matches("upsample_nearest", Tier::dedicated, strided, {0, 0}, "transposed", /*covered=*/false);
  // One frame of [N, C, T, H, W] permuted to [N*T, C, H, W]: dense whatever its size-1 dims' strides say.
  const Tensor frame = testing::randn({1, 3, 1, 4, 5}, DType::f32, 7).permute({0, 2, 1, 3, 4}).squeeze(0);
  const auto one = [&] { return Outputs{upsample_nearest(frame, {8, 10})}; };
  expect_matches("upsample_nearest", Tier::dedicated, one, {0, 0}, "permuted frame");
  // Two frames viewed frame-major: planes C apart, each plane dense.
  const Tensor frames = testing::randn({1, 3, 2, 4, 5}, DType::f32, 9).permute({0, 2, 1, 3, 4}).reshape({2, 3, 4, 5});
  ASSERT_FALSE(frames.is_contiguous());
  const auto two = [&] { return Outputs{upsample_nearest(frames, {8, 10})}; };
  expect_matches("upsample_nearest", Tier::dedicated, two, {0, 0}, "frame-major planes");
}

}  // namespace
}  // namespace fourfold
