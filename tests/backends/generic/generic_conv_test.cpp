// The generic conv2d / conv3d (zero padding, im2col by strided copies, the batched GEMM, a bias pass) against
// the reference at every ISA level, one and two threads: every case of conv_cases.h, groups included, in f32,
// bf16 and f16.
#include <gtest/gtest.h>

#include "backends/conv_cases.h"
#include "backends/generic/generic.h"

namespace fourfold {
namespace {

using namespace conv_cases;

TEST(GenericConv, MatchesTheReference) { expect_every_case_matches(Tier::generic, 100); }

// Real layers take several bands; here a budget of one byte makes every output row a band of its own.
TEST(GenericConv, BandsOfOneRowGiveTheSameResult) {
  uint64_t seed = 500;
  for (const ConvCase& c : cases()) {
    const tier_check::Outputs want = tier_check::under("generic", call(c, DType::f32, seed));
    const Tensor x = input(c, DType::f32, seed);
    const Tensor w = testing::randn(c.w, DType::f32, seed + 1);
    const Tensor b = testing::randn({c.w[0]}, DType::f32, seed + 2);
    Shape out_shape = want[0].shape();
    Tensor full = Tensor::empty(out_shape, DType::f32), banded = Tensor::empty(out_shape, DType::f32);
    const int spatial = static_cast<int>(c.x.size()) - 2;
    const auto expand = [&](const std::vector<int64_t>& v) { return v.size() == 1 ? std::vector<int64_t>(spatial, v[0]) : v; };
    const std::vector<int64_t> stride = expand(c.stride), padding = expand(c.padding), dilation = expand(c.dilation);
    generic::conv_in_bands({x, w, &b, stride, padding, dilation, c.groups, full}, int64_t{1} << 40);
    generic::conv_in_bands({x, w, &b, stride, padding, dilation, c.groups, banded}, 1);
    EXPECT_TRUE(testing::bit_equal(banded, full)) << describe(c, DType::f32);
    seed += 3;
  }
}

}  // namespace
}  // namespace fourfold
