// sigmoid on the generic and dedicated tiers against the reference at every host ISA level: the edges (0 at -inf,
// 1 at inf, NaN kept), and strided inputs, which the dedicated tier leaves. Bodies and tails in each dtype are the
// generated test's (tests/check/every_tier_sweep_test.cpp, sigmoid's sweep cases).
#include <gtest/gtest.h>

#include <limits>

#include "backends/tier_check.h"
#include "fourfold/ops.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using tier_check::expect_matches;
using tier_check::Outputs;

TEST(SigmoidTiers, EdgeValuesAsTheReference) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = Tensor::from_vector({inf, -inf, nan, -100, 100, -88.5, 0, 1e-30}, {8}, DType::f32);
  const auto fn = [&] { return Outputs{sigmoid(x)}; };
  expect_matches("sigmoid", Tier::generic, fn, {0, 1e-30}, "edges");
  expect_matches("sigmoid", Tier::dedicated, fn, {0, 1e-30}, "edges");
}

TEST(SigmoidTiers, StridedInputsFallBackFromTheDedicatedTier) {
  const Tensor x = testing::randn({6, 9}, DType::f32, 3).transpose(0, 1);
  const auto fn = [&] { return Outputs{sigmoid(x)}; };
  expect_matches("sigmoid", Tier::generic, fn, tier_check::tol(DType::f32), "transposed");
  expect_matches("sigmoid", Tier::dedicated, fn, tier_check::tol(DType::f32), "transposed", /*covered=*/false);
}

}  // namespace
}  // namespace fourfold
