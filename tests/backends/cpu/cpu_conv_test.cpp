// The dedicated conv2d / conv3d (implicit GEMM, cpu/conv_nd.cpp) against the reference at every ISA level the
// host has, one and two threads: every groups = 1 case of conv_cases.h in f32, bf16 and f16 (grouped ones
// fall back to the generic tier), and bad arguments still rejected by the ops layer with their messages.
#include <gtest/gtest.h>

#include "backends/conv_cases.h"

namespace fourfold {
namespace {

using namespace conv_cases;

TEST(CpuConv, MatchesTheReferenceAtEveryLevel) { expect_every_case_matches(Tier::dedicated, 1); }

TEST(CpuConv, BadArgumentsKeepTheirErrors) {
  ScopedPolicy dedicated(Policy::parse("dedicated"));
  const Tensor x = testing::randn({1, 4, 6, 6}, DType::f32, 1);
  try {
    conv2d(x, testing::randn({5, 3, 3, 3}, DType::f32, 2));
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("conv2d"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(conv2d(x, testing::randn({5, 4, 7, 7}, DType::f32, 3)), ShapeError);   // kernel larger than x
  EXPECT_THROW(conv2d(x, testing::randn({5, 4, 3, 3}, DType::bf16, 4)), DTypeError);
  EXPECT_THROW(conv3d(testing::randn({1, 4, 3, 6, 6}, DType::f32, 5), testing::randn({5, 4, 3, 3, 3}, DType::f32, 6),
                      std::nullopt, {1, 2}),
               ValueError);
}

}  // namespace
}  // namespace fourfold
