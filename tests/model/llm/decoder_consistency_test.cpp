// Properties of the engine that need no oracle: determinism, thread counts, prefill/decode equivalence, the
// KV cache's dtype, FP8 weights against their dequantized values.
#include <gtest/gtest.h>

#include "check/error_metrics.h"
#include "fourfold/parallel.h"
#include "model/llm/generation.h"
#include "model/model_test_support.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

std::vector<int64_t> tokens_of(Decoder& d, const SamplerOptions& o, int64_t n = 12) {
  Sampler s(o);
  return generate(d, synthetic_prompt(10, d.config().vocab_size, 5), n, s).tokens;
}

TEST(DecoderConsistency, SameSeedSameTokens) {
  Decoder d = testing::preset_decoder("tiny-moe");
  SamplerOptions o{0.9, 40, 0.95, 123};
  const auto a = tokens_of(d, o), b = tokens_of(d, o);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 12u);
}

TEST(DecoderConsistency, OneAndTwoThreadsGiveTheSameGreedyTokens) {
  const int before = num_threads();
  Decoder d = testing::preset_decoder("tiny-moe");
  set_num_threads(1);
  const auto one = tokens_of(d, {});
  set_num_threads(2);
  const auto two = tokens_of(d, {});
  set_num_threads(before);
  EXPECT_EQ(one, two);
}

TEST(DecoderConsistency, PrefillThenDecodeEqualsOneLongerPrefill) {
  for (const char* preset : {"tiny-moe", "tiny-llama"}) {
    SCOPED_TRACE(preset);
    Decoder d = testing::preset_decoder(preset);
    const std::vector<int64_t> prompt = synthetic_prompt(9, d.config().vocab_size, 8);
    const Tensor whole = d.forward(prompt);
    d.reset();
    d.forward(std::span<const int64_t>(prompt.data(), 8));
    const Tensor stepped = d.forward(std::span<const int64_t>(prompt.data() + 8, 1));
    EXPECT_EQ(d.position(), 9);
    // Not bit-equal: the paths tile attention differently, and the dedicated bf16-cache attention rounds the
    // softmax weights to bf16 (2^-9 relative) before the product with V, so the orders differ at that size.
    const ErrorStats e = compare_to_reference(stepped, whole.to(DType::f64));
    EXPECT_LT(e.max_rel, 1e-3);
    // A chunk of several tokens over an earlier cache (causal lower_right) too.
    d.reset();
    d.forward(std::span<const int64_t>(prompt.data(), 4));
    const Tensor chunked = d.forward(std::span<const int64_t>(prompt.data() + 4, 5));
    EXPECT_LT(compare_to_reference(chunked, whole.to(DType::f64)).max_rel, 1e-3);
  }
}

TEST(DecoderConsistency, RewindReplaysTheSameSteps) {
  Decoder d = testing::preset_decoder("tiny-moe");
  const std::vector<int64_t> prompt = synthetic_prompt(10, d.config().vocab_size, 3);
  d.forward(prompt);
  const int64_t next[] = {7, 11};
  const Tensor first = d.forward(next);
  d.rewind(10);
  EXPECT_TRUE(fourfold::testing::bit_equal(d.forward(next), first));
  EXPECT_TRUE(fourfold::testing::throws_with<ValueError>([&] { d.rewind(13); }, {"rewind"}));
}

TEST(DecoderConsistency, Bf16KvCacheIsCloseToF32) {
  Decoder f32 = testing::preset_decoder("tiny-moe", DType::f32, DType::f32);
  Decoder bf16 = testing::preset_decoder("tiny-moe", DType::f32, DType::bf16);
  const auto prompt = synthetic_prompt(16, 1024, 2), more = synthetic_prompt(8, 1024, 9);
  const Tensor a = teacher_forced_logits(f32, prompt, more), b = teacher_forced_logits(bf16, prompt, more);
  EXPECT_GT(compare_to_reference(b, a.to(DType::f64)).psnr_db, 35.0);
  EXPECT_LT(mean_kl_divergence(a, b), 1e-3);
}

TEST(DecoderConsistency, Fp8WeightsRunAndMatchTheirDequantizedModel) {
  ModelConfig c = preset_config("tiny-moe");
  c.quantization = Fp8Quantization{};
  TensorMap dequantized;
  const TensorMap fp8 = testing::quantize_fp8_blocks(c, synthetic_weights(c, DType::bf16, 1), dequantized);
  EXPECT_EQ(fp8.at("model.layers.0.mlp.experts.3.up_proj.weight").dtype(), DType::f8_e4m3fn);
  for (const char* tier : {"reference", "dedicated"}) {
    SCOPED_TRACE(tier);
    ScopedPolicy scope(Policy::parse(tier));
    Decoder q = testing::make_decoder(c, fp8), r = testing::make_decoder(c, dequantized);
    const auto prompt = synthetic_prompt(10, c.vocab_size, 1), more = synthetic_prompt(4, c.vocab_size, 2);
    const Tensor a = teacher_forced_logits(r, prompt, more), b = teacher_forced_logits(q, prompt, more);
    // The same weight values either way: only the evaluation differs.
    const ErrorStats e = compare_to_reference(b, a.to(DType::f64));
    EXPECT_GT(e.psnr_db, 80.0);
    EXPECT_EQ(top1_agreement_percent(a, b), 100.0);
  }
}

TEST(DecoderConsistency, ContextOverflowIsAValueError) {
  Decoder d = testing::preset_decoder("tiny-qwen3");
  const std::vector<int64_t> long_prompt(129, 1);
  EXPECT_TRUE(fourfold::testing::throws_with<ValueError>([&] { d.forward(long_prompt); }, {"decoder", "128"}));
  const std::vector<int64_t> bad = {1, 5000};
  EXPECT_TRUE(fourfold::testing::throws_with<ValueError>([&] { d.forward(bad); }, {"5000"}));
}

}  // namespace
}  // namespace fourfold::model
