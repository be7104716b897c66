// The decode profile (run --profile): every op call of the decode steps timed once under the scope that made it,
// the rows within the step's time, and the table's shares and rates computed from them.
#include <gtest/gtest.h>

#include <map>

#include "fourfold/profile.h"
#include "model/llm/decode_profile.h"
#include "model/llm/generation.h"
#include "model/model_test_support.h"

namespace fourfold::model {
namespace {

TEST(DecodeProfile, TimesEveryDecodeOpOnceUnderItsScope) {
  Decoder d = testing::preset_decoder("tiny-moe");
  Sampler sampler(SamplerOptions{});
  GenerateOptions options;
  options.profile = true;
  const int64_t steps = 5;
  const GenerationWithLogits g = generate(d, synthetic_prompt(6, d.config().vocab_size, 3), steps + 1, sampler, options);
  ASSERT_EQ(g.decoded_tokens, steps);
  const int64_t layers = d.config().num_hidden_layers;
  std::map<std::string, uint64_t> calls;   // "scope/op"
  double seconds = 0.0;
  for (const OpProfileRow& r : g.profile) {
    calls[r.scope + "/" + r.op] += r.calls;
    seconds += r.seconds;
    EXPECT_EQ(r.tier, "dedicated") << r.scope << "/" << r.op;
    EXPECT_GT(r.seconds, 0.0);
  }
  // Decode steps only (the prefill's calls are not in the profile), each op once per call site.
  EXPECT_EQ(calls["lm_head/linear"], static_cast<uint64_t>(steps));
  EXPECT_EQ(calls["embedding/embedding"], static_cast<uint64_t>(steps));
  EXPECT_EQ(calls["sampler/argmax"], static_cast<uint64_t>(steps));
  EXPECT_EQ(calls["moe/moe_experts"], static_cast<uint64_t>(steps * layers));
  EXPECT_EQ(calls["attention/scaled_dot_product_attention"], static_cast<uint64_t>(steps * layers));
  EXPECT_EQ(calls["attention/linear"], static_cast<uint64_t>(4 * steps * layers));   // q, k, v, o
  EXPECT_LE(seconds, g.decode_seconds);
  // The profile is off again: a later decode adds nothing.
  Sampler again(SamplerOptions{});
  generate(d, synthetic_prompt(6, d.config().vocab_size, 3), 3, again);
  EXPECT_EQ(op_profile_rows().size(), g.profile.size());
  uint64_t after = 0;
  for (const OpProfileRow& r : op_profile_rows()) after += r.calls;
  uint64_t before = 0;
  for (const OpProfileRow& r : g.profile) before += r.calls;
  EXPECT_EQ(after, before);
}

TEST(DecodeProfile, SharesAndRatesComeFromTheRows) {
  const std::vector<OpProfileRow> rows = {{"moe", "moe_experts", "dedicated", 20, 0.006, 6e9},
                                          {"lm_head", "linear", "dedicated", 10, 0.003, 3e8},
                                          {"moe", "softmax", "dedicated", 20, 0.0005, 0.0}};
  const DecodeProfile p = decode_profile(rows, 10, 0.010, 20.0);
  EXPECT_DOUBLE_EQ(p.us_per_step, 1000.0);
  EXPECT_NEAR(p.outside_ops_us, 50.0, 1e-9);
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[0].op, "moe_experts");               // longest first
  EXPECT_DOUBLE_EQ(p.ops[0].calls_per_step, 2.0);
  EXPECT_NEAR(p.ops[0].share, 0.6, 1e-12);
  EXPECT_NEAR(p.ops[0].gb_per_s, 1000.0, 1e-9);       // 6e9 bytes in 6 ms
  EXPECT_NEAR(p.ops[0].of_probe, 50.0, 1e-9);
  EXPECT_EQ(p.ops[2].gb_per_s, 0.0);                  // no byte estimate: no rate
  ASSERT_EQ(p.scopes.size(), 2u);
  EXPECT_EQ(p.scopes[0].scope, "moe");
  EXPECT_NEAR(p.scopes[0].us_per_step, 650.0, 1e-9);
  const std::string text = decode_profile_text(p);
  EXPECT_NE(text.find("outside ops 50 us (5.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("moe_experts"), std::string::npos);
}

}  // namespace
}  // namespace fourfold::model
