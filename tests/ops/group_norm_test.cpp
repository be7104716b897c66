// group_norm on the reference tier: groups = 1 and groups = C against the formula, affine, ranks, errors.
#include <cmath>
#include <vector>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

// Statistics of (n, group) over its C / groups channels and every spatial position, then per-channel affine.
std::vector<double> explicit_group_norm(const Tensor& x, int64_t groups, const Tensor* w, const Tensor* b, double eps) {
  const int64_t n = x.size(0), c = x.size(1), s = x.numel() / std::max<int64_t>(n * c, 1);
  const auto xv = x.to_vector();
  const std::vector<double> wv = w ? w->to_vector() : std::vector<double>(c, 1.0);
  const std::vector<double> bv = b ? b->to_vector() : std::vector<double>(c, 0.0);
  std::vector<double> out(xv.size());
  const int64_t cg = c / groups, count = cg * s;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t base = (i * c + g * cg) * s;   // a group's elements are contiguous in [N, C, S]
      double mean = 0, var = 0;
      for (int64_t e = 0; e < count; ++e) mean += xv[base + e] / count;
      for (int64_t e = 0; e < count; ++e) var += (xv[base + e] - mean) * (xv[base + e] - mean) / count;
      for (int64_t e = 0; e < count; ++e) {
        const int64_t ch = g * cg + e / s;
        out[base + e] = (xv[base + e] - mean) / std::sqrt(var + eps) * wv[ch] + bv[ch];
      }
    }
  return out;
}

double tolerance(DType dtype) { return testing::rounding_tolerance(dtype); }

TEST(GroupNorm, HandComputed) {
  testing::ReferenceOnly ref;
  // N = 1, C = 2, S = 2, one group: values 1, 2, 3, 4, mean 2.5, biased variance 1.25.
  Tensor x = Tensor::from_vector({1, 2, 3, 4}, {1, 2, 2}, DType::f64);
  const double s = std::sqrt(1.25);
  EXPECT_TRUE(all_close(group_norm(x, 1, std::nullopt, std::nullopt, 0.0), {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}, 1e-15, 0));
  // Two groups of one channel: each channel normalized on its own to -1, 1.
  EXPECT_TRUE(all_close(group_norm(x, 2, std::nullopt, std::nullopt, 0.0), {-1, 1, -1, 1}, 1e-15, 0));
}

TEST(GroupNorm, OneGroupAndOneGroupPerChannelMatchTheFormula) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    Tensor x = randn({2, 6, 3, 4}, dtype, 1, 3.0);
    Tensor w = randn({6}, dtype, 2), b = randn({6}, dtype, 3);
    const double tol = tolerance(dtype);
    for (int64_t groups : {1, 2, 3, 6}) {
      EXPECT_TRUE(all_close(group_norm(x, groups), explicit_group_norm(x, groups, nullptr, nullptr, 1e-5), tol, tol))
          << dtype_name(dtype) << " groups " << groups;
      EXPECT_TRUE(all_close(group_norm(testing::non_contiguous(x), groups, testing::non_contiguous(w), b, 1e-3),
                            explicit_group_norm(x, groups, &w, &b, 1e-3), tol, tol))
          << dtype_name(dtype) << " groups " << groups << " affine";
    }
  }
  // groups = 1 is layer_norm over (C, *spatial) without affine.
  Tensor x = randn({3, 4, 5}, DType::f64, 4);
  EXPECT_TRUE(all_close(group_norm(x, 1), layer_norm(x, {4, 5}), 1e-13, 1e-13));
}

TEST(GroupNorm, SpatialRanksAndEmptyDims) {
  testing::ReferenceOnly ref;
  Tensor x2 = randn({5, 4}, DType::f64, 1);   // [N, C]: one spatial position
  EXPECT_TRUE(all_close(group_norm(x2, 2), explicit_group_norm(x2, 2, nullptr, nullptr, 1e-5), 1e-12, 1e-12));
  Tensor x5 = randn({2, 4, 2, 3, 2}, DType::f64, 2);
  Tensor y5 = group_norm(x5, 2);
  EXPECT_EQ(y5.shape(), x5.shape());
  EXPECT_TRUE(all_close(y5, explicit_group_norm(x5, 2, nullptr, nullptr, 1e-5), 1e-12, 1e-12));
  EXPECT_EQ(group_norm(Tensor::empty({0, 4, 3}, DType::f32), 2).shape(), (Shape{0, 4, 3}));
  EXPECT_EQ(group_norm(Tensor::empty({2, 4, 0}, DType::f32), 4).shape(), (Shape{2, 4, 0}));
  // A NaN poisons its own group only.
  Tensor xn = Tensor::from_vector({NAN, 1, 2, 3, 4, 5}, {1, 2, 3}, DType::f32);
  const auto y = group_norm(xn, 2).to_vector();
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(y[j]));
  for (int j = 3; j < 6; ++j) EXPECT_TRUE(std::isfinite(y[j]));
}

TEST(GroupNorm, BadArgumentsNameOpAndArgument) {
  Tensor x = Tensor::zeros({2, 6, 4}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { group_norm(x, 4); }, {"group_norm", "'num_groups'", "6 channels", "4"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { group_norm(x, 0); }, {"group_norm", "'num_groups'", "0"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { group_norm(x, -2); }, {"group_norm", "'num_groups'", "-2"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { group_norm(Tensor::zeros({6}, DType::f32), 1); },
                                               {"group_norm", "'x'", "at least 2"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { group_norm(x, 2, Tensor::zeros({4}, DType::f32)); },
                                               {"group_norm", "'weight'", "[6]", "[4]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { group_norm(x, 2, std::nullopt, Tensor::zeros({1, 6}, DType::f32)); },
                                               {"group_norm", "'bias'", "[1, 6]"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { group_norm(x, 2, Tensor::zeros({6}, DType::bf16)); },
                                               {"group_norm", "'weight'", "bfloat16"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { group_norm(Tensor::zeros({2, 6}, DType::i32), 2); },
                                               {"group_norm", "'x'", "int32"}));
}

}  // namespace
}  // namespace fourfold
