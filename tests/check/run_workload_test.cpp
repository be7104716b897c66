// The run workload without the command: a library user gets the same figures and record the command prints, and
// the hooks see the setup before the decode and the text as it streams.
#include <nlohmann/json.hpp>

#include "check/run_workload.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

RunRequest tiny_request() {
  RunRequest r;
  r.preset = "tiny-qwen3";
  r.prompt.synthetic_tokens = 6;
  r.gen = 3;
  r.ignore_eos = true;
  r.step_probe_mib = 1;
  return r;
}

TEST(RunWorkload, MeasuresTheDecodeAndNamesItsWorkload) {
  std::vector<std::string> order;
  RunHooks hooks;
  hooks.ready = [&](const RunSetup& s) {
    order.push_back("ready");
    EXPECT_EQ(s.positions, 9);
    EXPECT_FALSE(s.past_max);
    EXPECT_EQ(s.prompt_source, "synthetic (6 ids from seed 0)");
  };
  hooks.status = [&](const std::string& m) {
    if (m.rfind("prefill", 0) == 0) order.push_back("prefill");
  };
  const RunOutcome o = run_workload(tiny_request(), hooks);
  EXPECT_EQ(order, (std::vector<std::string>{"ready", "prefill"}));
  EXPECT_EQ(o.prompt.ids.size(), 6u);
  EXPECT_EQ(o.generation.tokens.size(), 3u);
  EXPECT_GT(o.decode_tokens_per_s, 0.0);
  EXPECT_GT(o.floor.weight_bytes, 0u);
  ASSERT_TRUE(o.steps.has_value());   // one probe sample per decode step
  EXPECT_EQ(o.steps->probe_samples.size(), o.generation.step_seconds.size());
  EXPECT_FALSE(o.tiers.empty());
  EXPECT_GT(o.kv_cache_bytes, 0u);
  ASSERT_EQ(o.records.throughput->rows.size(), 2u);
  EXPECT_EQ(o.records.manifest.workload.name, "tiny-qwen3");
  EXPECT_EQ(o.records.manifest.workload.parameters.front(), "gen=3");
}

TEST(RunWorkload, TheRecordCarriesTheRunObject) {
  RunRequest r = tiny_request();
  r.profile = true;
  const RunOutcome o = run_workload(r);
  const nlohmann::json j = nlohmann::json::parse(run_record_json(o));
  EXPECT_EQ(j["run"]["decoded_tokens"], o.generation.decoded_tokens);
  EXPECT_EQ(j["run"]["generated_tokens"].size(), 3u);
  EXPECT_TRUE(j["run"].contains("decode_profile"));
  EXPECT_TRUE(j.contains("throughput"));
  EXPECT_TRUE(j.contains("memory"));
}

TEST(RunWorkload, APromptTheModelCannotReadIsRefusedBeforeTheDecode) {
  RunRequest r = tiny_request();
  r.prompt.text = "hello";   // a preset has no tokenizer
  bool ready = false;
  RunHooks hooks;
  hooks.ready = [&](const RunSetup&) { ready = true; };
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { run_workload(r, hooks); }, {"run", "--prompt", "tokenizer.json"}));
  EXPECT_FALSE(ready);
  r.prompt.text.clear();
  r.prompt.ids = "1,x";
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { run_workload(r); }, {"--prompt-ids", "x"}));
  r.prompt.ids = "1";
  r.gen = 1 << 20;
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { run_workload(r); }, {"--gen", "max_position_embeddings"}));
}

TEST(RunWorkload, SamplingFollowsGenerationConfigUnlessTheCommandLineSetsIt) {
  model::GenerationConfig g;
  g.do_sample = true;
  g.top_k = 20;
  std::string said;
  const model::SamplerOptions from_file = choose_sampling({}, false, g, said);
  EXPECT_EQ(from_file.top_k, 20);
  EXPECT_EQ(from_file.temperature, 1.0);
  EXPECT_NE(said.find("generation_config.json"), std::string::npos);
  const model::SamplerOptions given = choose_sampling({0.5, 3, 0.9, 7}, true, g, said);
  EXPECT_EQ(given.top_k, 3);
  EXPECT_EQ(said, "from the command line");
}

}  // namespace
}  // namespace fourfold
