// The decode step's selections on the dedicated tier (every host ISA level, one and two threads) against the
// reference, bit for bit: topk (the router's top 8 of 128, ties and NaN), argmax (a 151,936-wide logits row,
// greedy sampling) and embedding (the token rows); and the layouts they leave to the other tiers.
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "backends/tier_check.h"

namespace fourfold {
namespace {

using tier_check::expect_matches;
using tier_check::Outputs;
using tier_check::with_specials;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr tier_check::Tol kExact{0, 0};

TEST(CpuSelect, TopkMatchesTheReferenceWithTiesAndSpecials) {
  uint64_t seed = 5;
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (int64_t n : {1, 8, 128, 1000}) {
      // Rounded to quarters: many ties, -0 beside +0.
      Tensor x = testing::rand_uniform({6, n}, DType::f64, seed++, -2, 2);
      x = Tensor::from_vector([&] {
        std::vector<double> v = x.to_vector();
        for (double& e : v) e = std::round(e * 4) / 4;
        return v;
      }(), {6, n}, t);
      const Tensor special = with_specials({3, n}, t, seed++, {kNaN, kInf, -kInf, 0.0, -0.0, kNaN});
      for (int64_t k : {int64_t(1), std::min<int64_t>(8, n), n})
        for (bool largest : {true, false})
          for (const Tensor& in : {x, special}) {
            const std::string what = fmt::format("{} n={} k={} largest={}", dtype_name(t), n, k, largest);
            expect_matches("topk", Tier::dedicated, [&] {
              auto [v, i] = topk(in, k, -1, largest);
              return Outputs{v, i};
            }, kExact, what);
          }
    }
}

TEST(CpuSelect, ArgmaxMatchesTheReference) {
  uint64_t seed = 50;
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (int64_t n : {1, 5, 4096, 4097, 151936}) {
      const std::string what = fmt::format("{} n={}", dtype_name(t), n);
      const Tensor x = testing::randn({2, n}, t, seed++);
      expect_matches("argmax", Tier::dedicated, [&] { return Outputs{argmax(x, -1)}; }, kExact, what);
      // The largest value twice (the first wins), and a NaN past the first block (it wins).
      std::vector<double> v = x.to_vector();
      v[static_cast<size_t>(n / 3)] = 100;
      v[static_cast<size_t>(n - 1)] = 100;
      if (n > 8192) v[static_cast<size_t>(n + 4100)] = kNaN;
      const Tensor ties = Tensor::from_vector(v, {2, n}, t);
      expect_matches("argmax", Tier::dedicated, [&] { return Outputs{argmax(ties, -1)}; }, kExact, what + " ties");
      // Row 0: -inf but for -0 and then +0 (equal: the first wins) past the first block where there is one;
      // row 1: -inf only (index 0); then infinities and zeros sprinkled over random values.
      std::vector<double> z(static_cast<size_t>(2 * n), -kInf);
      z[static_cast<size_t>(n / 2 + n / 4)] = -0.0;
      z[static_cast<size_t>(n - 1)] = 0.0;
      const Tensor zeros = Tensor::from_vector(z, {2, n}, t);
      expect_matches("argmax", Tier::dedicated, [&] { return Outputs{argmax(zeros, -1)}; }, kExact, what + " zeros");
      const Tensor special = with_specials({2, n}, t, seed++, {kInf, -kInf, 0.0, -0.0});
      expect_matches("argmax", Tier::dedicated, [&] { return Outputs{argmax(special, -1)}; }, kExact, what + " specials");
    }
}

TEST(CpuSelect, EmbeddingMatchesTheReference) {
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (DType index : {DType::i64, DType::i32}) {
      const Tensor w = testing::random_bits({50, 24}, t, 9);
      const Tensor ids = Tensor::from_vector({3, 0, 49, 3, 17}, {5}, index);
      expect_matches("embedding", Tier::dedicated, [&] { return Outputs{embedding(w, ids)}; }, kExact,
                     fmt::format("{} {}", dtype_name(t), dtype_name(index)));
    }
}

TEST(CpuSelect, OtherLayoutsFallBack) {
  const Tensor x = testing::randn({8, 6}, DType::f32, 3);
  expect_matches("topk", Tier::dedicated, [&] {
    auto [v, i] = topk(x, 2, 0);   // not the last dim
    return Outputs{v, i};
  }, kExact, "dim 0", /*covered=*/false);
  expect_matches("argmax", Tier::dedicated, [&] { return Outputs{argmax(x.transpose(0, 1), -1)}; }, kExact,
                 "transposed", /*covered=*/false);
  expect_matches("topk", Tier::dedicated, [&] {
    auto [v, i] = topk(x.to(DType::f64), 2);   // f64 stays on the reference
    return Outputs{v, i};
  }, kExact, "f64", /*covered=*/false);
}

}  // namespace
}  // namespace fourfold
