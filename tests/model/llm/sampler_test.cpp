#include <gtest/gtest.h>

#include "model/llm/sampler.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

Tensor some_logits(uint64_t seed) { return fourfold::testing::randn({1, 500}, DType::f32, seed, 2.0); }

int64_t argmax_of(const Tensor& t) {
  const std::vector<double> v = t.to_vector();
  return std::max_element(v.begin(), v.end()) - v.begin();
}

TEST(Sampler, GreedyIsArgmax) {
  Sampler s({});
  for (uint64_t seed = 0; seed < 5; ++seed) EXPECT_EQ(s.sample(some_logits(seed)), argmax_of(some_logits(seed)));
  // Ties: the lowest index, as argmax.
  EXPECT_EQ(s.sample(Tensor::from_values(std::vector<double>{1, 3, 3, 0}, {4}, DType::f32)), 1);
}

TEST(Sampler, TopKOneAndTinyTopPAreGreedy) {
  Sampler k1({1.0, 1, 1.0, 9}), p0({1.5, 0, 1e-9, 9});
  for (uint64_t seed = 0; seed < 5; ++seed) {
    EXPECT_EQ(k1.sample(some_logits(seed)), argmax_of(some_logits(seed)));
    EXPECT_EQ(p0.sample(some_logits(seed)), argmax_of(some_logits(seed)));
  }
}

TEST(Sampler, SameSeedSameDrawsAndDrawsFollowTheDistribution) {
  Sampler a({1.0, 0, 1.0, 42}), b({1.0, 0, 1.0, 42});
  const Tensor two = Tensor::from_values(std::vector<double>{0.0, std::log(3.0)}, {2}, DType::f32);   // p = 1/4, 3/4
  int ones = 0;
  for (int i = 0; i < 4000; ++i) {
    const int64_t x = a.sample(two);
    EXPECT_EQ(x, b.sample(two));
    ones += x == 1 ? 1 : 0;
  }
  EXPECT_NEAR(ones / 4000.0, 0.75, 0.03);
}

TEST(Sampler, TopKKeepsOnlyTheKLargest) {
  Sampler s({5.0, 3, 1.0, 1});
  const Tensor logits = some_logits(3);
  std::vector<double> v = logits.to_vector();
  std::vector<double> sorted = v;
  std::sort(sorted.rbegin(), sorted.rend());
  for (int i = 0; i < 200; ++i) EXPECT_GE(v[s.sample(logits)], sorted[2]);
}

TEST(Sampler, BadOptionsAreValueErrors) {
  EXPECT_TRUE(fourfold::testing::throws_with<ValueError>([] { Sampler({-1.0, 0, 1.0, 0}); }, {"temperature"}));
  EXPECT_TRUE(fourfold::testing::throws_with<ValueError>([] { Sampler({1.0, 0, 0.0, 0}); }, {"top_p"}));
  EXPECT_TRUE(fourfold::testing::throws_with<ValueError>([] { Sampler({1.0, -2, 1.0, 0}); }, {"top_k"}));
}

}  // namespace
}  // namespace fourfold::model
