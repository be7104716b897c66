// The prefill compute ceiling's FLOP count, by hand on a small MoE config with one dense layer.
#include <gtest/gtest.h>

#include "model/llm/bandwidth_floor.h"
#include "model/llm/presets.h"

namespace fourfold::model {
namespace {

TEST(PrefillFlops, CountsProjectionsCausalAttentionActiveExpertsAndOneLmHeadRow) {
  ModelConfig c = preset_config("tiny-moe", 2);
  c.hidden_size = 64;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.vocab_size = 100;
  c.num_experts = 8;
  c.num_experts_per_tok = 2;
  c.moe_intermediate_size = 32;
  c.intermediate_size = 48;
  c.mlp_only_layers = {1};   // layer 1 dense
  ASSERT_TRUE(c.is_moe_layer(0));
  ASSERT_FALSE(c.is_moe_layer(1));
  const double t = 5, h = 64, q = 64, kv = 32;
  const double projections = t * (h * q + 2 * h * kv + q * h);
  const double attention = 2 * (1 + 2 + 3 + 4 + 5) * q;                 // no cached positions
  const double moe = t * (8 * h + 2 * 3 * 32 * h), dense = t * 3 * 48 * h;
  const double want = 2 * (2 * (projections + attention) + moe + dense + 100 * h);
  EXPECT_DOUBLE_EQ(prefill_flops(c, 5), want);
  // Every position's logits, and 3 cached positions before the 5 new ones (each new one sees 3 more keys).
  EXPECT_DOUBLE_EQ(prefill_flops(c, 5, 0, true), want + 2 * 4 * 100 * h);
  EXPECT_DOUBLE_EQ(prefill_flops(c, 5, 3), want + 2 * 2 * (2 * 5 * 3 * q));
}

// A hybrid: Gated DeltaNet layers count their five projections and the delta rule's three products per value
// head, the full layers their gated q_proj (twice as tall), every MoE layer its shared expert and its gate.
TEST(PrefillFlops, CountsAHybridsLinearLayersGatedAttentionAndSharedExpert) {
  const ModelConfig c = preset_config("tiny-hybrid");   // 3 linear layers, then 1 full
  const double t = 3, h = 128, q = 4 * 32, kv = 2 * 32, cd = 2 * 2 * 32 + 4 * 32, vd = 4 * 32, hv = 4, dk = 32;
  const double linear = t * h * (cd + vd + 2 * hv) + t * vd * h + t * 3 * vd * dk;
  const double full = t * (2 * h * q + 2 * h * kv + q * h) + 2 * (1 + 2 + 3) * q;
  const double moe = t * (8 * h + 2 * 3 * 64 * h + (3 * 64 + 1) * h);
  EXPECT_DOUBLE_EQ(prefill_flops(c, 3), 2 * (3 * linear + full + 4 * moe + 1024 * h));
}

}  // namespace
}  // namespace fourfold::model
