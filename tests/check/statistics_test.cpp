// Order statistics and the geometric mean on samples whose answers are known by hand (and match numpy).
#include <cmath>
#include <limits>

#include "check/statistics.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

TEST(Statistics, MedianOddAndEven) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({7.0}), 7.0);
}

TEST(Statistics, PercentileIsNumpyLinear) {
  // numpy.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], q) with the default method "linear".
  const std::vector<double> x = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(percentile(x, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(x, 10), 1.9);
  EXPECT_DOUBLE_EQ(percentile(x, 25), 3.25);
  EXPECT_DOUBLE_EQ(percentile(x, 50), 5.5);
  EXPECT_DOUBLE_EQ(percentile(x, 90), 9.1);
  EXPECT_DOUBLE_EQ(percentile(x, 100), 10.0);
  // numpy.percentile([15, 20, 35, 40, 50], [10, 40, 90]) = [17, 29, 46]
  EXPECT_NEAR(percentile({15, 20, 35, 40, 50}, 10), 17.0, 1e-12);
  EXPECT_NEAR(percentile({15, 20, 35, 40, 50}, 40), 29.0, 1e-12);
  EXPECT_NEAR(percentile({15, 20, 35, 40, 50}, 90), 46.0, 1e-12);
  EXPECT_DOUBLE_EQ(percentile({2.0}, 37), 2.0);
}

TEST(Statistics, MinMaxMeanAndSummary) {
  const std::vector<double> x = {5, -1, 3, 8, 0};
  EXPECT_EQ(min_of(x), -1);
  EXPECT_EQ(max_of(x), 8);
  EXPECT_DOUBLE_EQ(mean_of(x), 3.0);
  const Summary s = summarize(x);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.p10, -0.6);   // rank 0.4 between -1 and 0
  EXPECT_DOUBLE_EQ(s.p90, 6.8);    // rank 3.6 between 5 and 8
  EXPECT_EQ(s.min, -1);
  EXPECT_EQ(s.max, 8);
  EXPECT_EQ(x[0], 5);   // the caller's order is untouched
}

TEST(Statistics, InfinityIsOrderedLikeANumber) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(median({1.0, inf, inf}), inf);
  EXPECT_EQ(percentile({1.0, 2.0, inf}, 0), 1.0);
  EXPECT_EQ(max_of({1.0, inf}), inf);
}

TEST(Statistics, GeometricMean) {
  EXPECT_NEAR(geometric_mean({2.0, 8.0}), 4.0, 1e-12);
  EXPECT_NEAR(geometric_mean({1.0, 10.0, 100.0}), 10.0, 1e-12);
  EXPECT_NEAR(geometric_mean({0.5, 2.0}), 1.0, 1e-12);
  // 400 ratios of 1e300 would overflow a plain product; the log form does not.
  EXPECT_NEAR(geometric_mean(std::vector<double>(400, 1e300)) / 1e300, 1.0, 1e-9);
}

TEST(Statistics, BadSamplesAreValueErrors) {
  using testing::throws_with;
  EXPECT_TRUE(throws_with<ValueError>([] { median({}); }, {"median", "'samples'", "at least one value"}));
  EXPECT_TRUE(throws_with<ValueError>([] { percentile({1.0, NAN}, 50); }, {"percentile", "NaN at index 1"}));
  EXPECT_TRUE(throws_with<ValueError>([] { percentile({1.0}, 101); }, {"percentile", "'p'", "[0, 100]"}));
  EXPECT_TRUE(throws_with<ValueError>([] { percentile({1.0}, -1); }, {"percentile", "'p'"}));
  EXPECT_TRUE(throws_with<ValueError>([] { geometric_mean({1.0, 0.0}); }, {"geometric_mean", "> 0", "index 1"}));
  EXPECT_TRUE(throws_with<ValueError>([] { geometric_mean({-2.0}); }, {"geometric_mean", "> 0"}));
  EXPECT_TRUE(throws_with<ValueError>([] { summarize({}); }, {"summarize"}));
}

}  // namespace
}  // namespace fourfold
