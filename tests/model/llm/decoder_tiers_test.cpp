// The tiny presets on every tier agree with the reference tier: logits over a prompt and a few decode steps.
#include <gtest/gtest.h>

#include "check/error_metrics.h"
#include "model/llm/generation.h"
#include "model/model_test_support.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

Tensor logits_under(const std::string& policy, const std::string& preset, DType activation) {
  ScopedPolicy scope(Policy::parse(policy));
  Decoder d = testing::preset_decoder(preset, activation, DType::f32);
  const ModelConfig& c = d.config();
  return teacher_forced_logits(d, synthetic_prompt(12, c.vocab_size, 3), synthetic_prompt(4, c.vocab_size, 4));
}

class EveryPreset : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryPreset, TiersAgreeWithTheReferenceTier) {
  const Tensor reference = logits_under("reference", GetParam(), DType::f32);
  for (const char* tier : {"generic", "dedicated"}) {
    SCOPED_TRACE(tier);
    const Tensor got = logits_under(tier, GetParam(), DType::f32);
    const ErrorStats e = compare_to_reference(got, reference.to(DType::f64));
    // f32 activations over bf16 weights: the tiers differ by f32 rounding orders only.
    EXPECT_GT(e.psnr_db, 80.0);
    EXPECT_LT(e.max_rel, 1e-3);
    EXPECT_EQ(top1_agreement_percent(reference, got), 100.0);
  }
}

TEST_P(EveryPreset, Bf16ActivationsStayClose) {
  const Tensor reference = logits_under("reference", GetParam(), DType::f32);
  const Tensor got = logits_under("dedicated", GetParam(), DType::bf16);
  const ErrorStats e = compare_to_reference(got, reference.to(DType::f64));
  EXPECT_GT(e.psnr_db, 30.0);
  EXPECT_LT(mean_kl_divergence(reference, got), 1e-2);
}

INSTANTIATE_TEST_SUITE_P(Presets, EveryPreset, ::testing::Values("tiny-moe", "tiny-qwen3", "tiny-llama"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace fourfold::model
