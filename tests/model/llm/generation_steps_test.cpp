// The decode steps one by one (run's step-by-step floor): a hook before each step, outside the timing, and each
// step's own seconds, which add up to the decode's.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "model/llm/generation.h"
#include "model/model_test_support.h"

namespace fourfold::model {
namespace {

// Step i runs between the end of hook i and the start of hook i + 1 (the last one before generate returns), so
// its seconds fit in that gap whatever the machine's load. Were the hook inside the timing, each step would read
// at least the hook's 30 ms sleep, more than the gap holds beyond the step itself. Causality, not a speed.
TEST(GenerationSteps, EachStepTimedAndTheHookBeforeItIsNot) {
  using Clock = std::chrono::steady_clock;
  Decoder d = testing::preset_decoder("tiny-moe");
  Sampler sampler(SamplerOptions{});
  GenerateOptions options;
  std::vector<Clock::time_point> hook_start, hook_end;
  options.before_step = [&] {
    hook_start.push_back(Clock::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    hook_end.push_back(Clock::now());
  };
  const int64_t steps = 4;
  const GenerationWithLogits g = generate(d, synthetic_prompt(6, d.config().vocab_size, 3), steps + 1, sampler, options);
  const Clock::time_point returned = Clock::now();
  ASSERT_EQ(g.decoded_tokens, steps);
  ASSERT_EQ(hook_start.size(), static_cast<size_t>(steps));   // before each decode step, not before the prefill
  ASSERT_EQ(g.step_seconds.size(), static_cast<size_t>(steps));
  for (int64_t i = 0; i < steps; ++i) {
    const Clock::time_point gap_end = i + 1 < steps ? hook_start[i + 1] : returned;
    const double gap = std::chrono::duration<double>(gap_end - hook_end[i]).count();
    EXPECT_GT(g.step_seconds[i], 0.0);
    EXPECT_LE(g.step_seconds[i], gap) << "step " << i;
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
