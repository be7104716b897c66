// The decode steps one by one (run's step-by-step floor): a hook before each step, outside the timing, and each
// step's own seconds, which add up to the decode's.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <thread>

#include "model/generation.h"
#include "model_test_support.h"

namespace fourfold::model {
namespace {

TEST(GenerationSteps, EachStepTimedAndTheHookBeforeItIsNot) {
  Decoder d = testing::preset_decoder("tiny-moe");
  Sampler sampler(SamplerOptions{});
  GenerateOptions options;
  int64_t hooks = 0;
  // Each hook sleeps far longer than a tiny-moe step takes: were it timed, the steps would show it.
  options.before_step = [&] {
    ++hooks;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  };
  const int64_t steps = 4;
  const GenerationWithLogits g = generate(d, synthetic_prompt(6, d.config().vocab_size, 3), steps + 1, sampler, options);
  ASSERT_EQ(g.decoded_tokens, steps);
  EXPECT_EQ(hooks, steps);   // before each decode step, not before the prefill
  ASSERT_EQ(g.step_seconds.size(), static_cast<size_t>(steps));
  for (double s : g.step_seconds) {
    EXPECT_GT(s, 0.0);
    EXPECT_LT(s, 0.030);
  }
  EXPECT_NEAR(std::accumulate(g.step_seconds.begin(), g.step_seconds.end(), 0.0), g.decode_seconds, 1e-12);
}

TEST(GenerationSteps, AStopTokenEndsTheStepsItsHookAndTimesAgree) {
  Decoder d = testing::preset_decoder("tiny-moe");
  const std::vector<int64_t> prompt = synthetic_prompt(6, d.config().vocab_size, 3);
  Sampler first(SamplerOptions{});
  const Generation free_run = generate(d, prompt, 6, first);
  ASSERT_GE(free_run.tokens.size(), 3u);
  GenerateOptions options;
  options.stop_tokens = {free_run.tokens[2]};   // the third token sampled: two decode steps, then stop
  int64_t hooks = 0;
  options.before_step = [&] { ++hooks; };
  Sampler again(SamplerOptions{});
  const GenerationWithLogits g = generate(d, prompt, 6, again, options);
  EXPECT_TRUE(g.stopped);
  EXPECT_EQ(g.decoded_tokens, hooks);
  EXPECT_EQ(g.step_seconds.size(), static_cast<size_t>(g.decoded_tokens));
}

}  // namespace
}  // namespace fourfold::model
