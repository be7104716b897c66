// Binding a checkpoint's tensors: every malformed input names the tensor; experts stacked without a copy when
// the storage allows.
#include <gtest/gtest.h>

#include "model/llm/expert_stack.h"
#include "model/llm/model_weights.h"
#include "model/llm/weight_layout.h"
#include "model/model_test_support.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

using fourfold::testing::throws_with;

const ModelConfig& config() {
  static const ModelConfig c = preset_config("tiny-moe");
  return c;
}
TensorMap weights() { return synthetic_weights(config(), DType::bf16, 1); }

TEST(ModelWeights, MissingTensorIsNamed) {
  TensorMap w = weights();
  w.erase("model.layers.1.self_attn.k_norm.weight");
  EXPECT_TRUE(throws_with<FormatError>([&] { bind_weights(config(), w, DType::f32, "ckpt"); },
                                       {"ckpt", "model.layers.1.self_attn.k_norm.weight", "missing"}));
}

TEST(ModelWeights, WrongShapeIsNamed) {
  TensorMap w = weights();
  w["model.layers.0.mlp.experts.5.down_proj.weight"] = Tensor::zeros({64, 128}, DType::bf16);
  EXPECT_TRUE(throws_with<FormatError>([&] { bind_weights(config(), w, DType::f32, "ckpt"); },
                                       {"model.layers.0.mlp.experts.5.down_proj.weight", "[128, 64]", "[64, 128]"}));
}

TEST(ModelWeights, ExtraTensorAndBadDtypeAreNamed) {
  TensorMap w = weights();
  w["model.layers.0.self_attn.rotary_emb.inv_freq"] = Tensor::zeros({16}, DType::f32);
  EXPECT_TRUE(throws_with<FormatError>([&] { bind_weights(config(), w, DType::f32, "ckpt"); },
                                       {"model.layers.0.self_attn.rotary_emb.inv_freq", "extra"}));
  w = weights();
  w["model.norm.weight"] = Tensor::zeros({128}, DType::i32);
  EXPECT_TRUE(throws_with<FormatError>([&] { bind_weights(config(), w, DType::f32, "ckpt"); },
                                       {"model.norm.weight", "int32"}));
}

TEST(ModelWeights, Fp8WeightWithoutItsScaleIsNamed) {
  ModelConfig c = config();
  c.quantization = Fp8Quantization{};
  TensorMap deq;
  TensorMap w = testing::quantize_fp8_blocks(c, synthetic_weights(c, DType::bf16, 1), deq);
  w.erase("model.layers.1.self_attn.o_proj.weight_scale_inv");
  EXPECT_TRUE(throws_with<FormatError>([&] { bind_weights(c, w, DType::f32, "ckpt"); },
                                       {"model.layers.1.self_attn.o_proj.weight_scale_inv", "missing"}));
}

TEST(ModelWeights, WeightsAreUsedInPlaceAndSeparateExpertsCopiedOnce) {
  // synthetic_weights keeps each projection's experts in one block: stacked by a view, nothing copied.
  EXPECT_EQ(bind_weights(config(), weights(), DType::f32, "ckpt").copied_bytes, 0u);
  TensorMap w = weights();
  // Each expert in a storage of its own, behind a lead that differs from one to the next: separate blocks can
  // lie back to back (the allocator maps each one), and equal spacing would make them a view.
  int64_t lead = 0;
  for (auto& [name, t] : w)
    if (name.find(".mlp.experts.") != std::string::npos) {
      lead = lead % 7 + 1;
      Tensor own = Tensor::empty({lead * 64 + t.numel()}, t.dtype()).narrow(0, lead * 64, t.numel()).view(t.shape());
      own.copy_from(t);
      t = own;
    }
  const void* q = w.at("model.layers.0.self_attn.q_proj.weight").data();
  const ModelWeights m = bind_weights(config(), w, DType::f32, "ckpt");
  EXPECT_EQ(m.layers[0].attention.q.weight.data(), q);   // bf16 under f32: in place
  EXPECT_EQ(m.layers[0].moe->experts.gate.shape(), (Shape{8, 64, 128}));
  // Each expert allocated on its own: gate, up, down of two layers copied once each.
  EXPECT_EQ(m.copied_bytes, 2u * 3u * 8u * 64u * 128u * 2u);
  EXPECT_EQ(m.copies.size(), 6u);
  EXPECT_GT(m.total_bytes, m.active_bytes_per_token);
}

TEST(ExpertStack, AdjacentExpertsBecomeAViewAndOthersACopy) {
  const Tensor storage = fourfold::testing::randn({3 * 4 * 5 + 7}, DType::bf16, 1);
  std::vector<Tensor> parts;
  for (int e = 0; e < 3; ++e) parts.push_back(storage.narrow(0, 2 + e * 20, 20).view({4, 5}));
  uint64_t copied = 0;
  const Tensor view = stack_experts(parts, copied);
  EXPECT_EQ(copied, 0u);
  EXPECT_EQ(view.data(), parts[0].data());
  EXPECT_TRUE(fourfold::testing::bit_equal(view.select(0, 2).contiguous(), parts[2].contiguous()));
  // Equally spaced with a gap: still a view.
  std::vector<Tensor> gapped;
  for (int e = 0; e < 3; ++e) gapped.push_back(storage.narrow(0, e * 22, 20).view({4, 5}));
  const Tensor strided = stack_experts(gapped, copied);
  EXPECT_EQ(copied, 0u);
  EXPECT_TRUE(fourfold::testing::bit_equal(strided.select(0, 1).contiguous(), gapped[1].contiguous()));
  // Unequally spaced: one copy. (Separate allocations may lie equally spaced: the allocator maps each block on
  // its own pages, and AddressSanitizer's allocator places equal sizes at equal steps.)
  const Tensor wide = fourfold::testing::randn({100}, DType::bf16, 2);
  std::vector<Tensor> separate = {wide.narrow(0, 0, 20).view({4, 5}), wide.narrow(0, 20, 20).view({4, 5}),
                                  wide.narrow(0, 50, 20).view({4, 5})};
  const Tensor copy = stack_experts(separate, copied);
  EXPECT_EQ(copied, 3u * 20u * 2u);
  EXPECT_TRUE(fourfold::testing::bit_equal(copy.select(0, 1), separate[1]));
}

}  // namespace
}  // namespace fourfold::model
