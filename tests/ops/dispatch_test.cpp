// The force policy: parsing, aliases, errors, scoping, and the counters of which tier ran.
#include "support/test_support.h"

namespace fourfold {
namespace {

TEST(Policy, ParsesAllPerOpAndAliases) {
  Policy p = Policy::parse("generic,pad=reference,sdpa=dedicated");
  ASSERT_TRUE(p.all.has_value());
  EXPECT_EQ(*p.all, Tier::generic);
  EXPECT_EQ(p.forced_for("constant_pad_nd"), Tier::reference);
  EXPECT_EQ(p.forced_for("scaled_dot_product_attention"), Tier::dedicated);
  EXPECT_EQ(p.forced_for("softmax"), Tier::generic);
  EXPECT_EQ(Policy::parse(p.to_string()).to_string(), p.to_string());
  EXPECT_FALSE(Policy::parse("").all.has_value());
}

TEST(Policy, UnknownNamesAreClearErrors) {
  EXPECT_TRUE(testing::throws_with<ValueError>([] { Policy::parse("softmax=fast"); },
                                               {"policy", "'tier'", "reference, generic, dedicated", "'fast'"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([] { Policy::parse("softmaxx=generic"); },
                                               {"policy", "'op'", "linear", "'softmaxx'"}));
}

TEST(Policy, EveryOpHasAName) {
  const auto names = op_names();
  EXPECT_GE(names.size(), 28u);
  for (const auto& n : names) EXPECT_NO_THROW(Policy::parse(n + "=reference"));
}

TEST(Dispatch, CountsTheTierThatRanAndFallsBackToReference) {
  reset_dispatch_counts();
  {
    // Neither the dedicated nor the generic softmax covers dim 0: it falls back to the reference.
    ScopedPolicy scope(Policy::parse("softmax=dedicated"));
    softmax(Tensor::zeros({2, 3}, DType::f32), 0);
    EXPECT_EQ(current_policy().forced_for("softmax"), Tier::dedicated);
  }
  EXPECT_FALSE(current_policy().forced_for("softmax").has_value());
  const auto counts = dispatch_counts();
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].op, "softmax");
  EXPECT_EQ(counts[0].calls[static_cast<int>(Tier::reference)], 1u);
  EXPECT_EQ(counts[0].last_variant, "reference");
}

}  // namespace
}  // namespace fourfold
