// FP8 checkpoints: quantize, write, load; the dequantized weights are within FP8's error of the originals, the
// scales have Hugging Face's shapes, everything else is untouched. Also the make-model and quantize commands.
#include <unistd.h>

#include <cmath>

#include <gtest/gtest.h>

#include "model/llm/generation.h"
#include "model/llm/model_folder.h"
#include "model/model_test_support.h"
#include "model/llm/model_maker.h"
#include "model/llm/quantize.h"
#include "model/llm/weight_layout.h"
#include "model/temp_dirs.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;
using fourfold::testing::bit_equal;
using fourfold::testing::throws_with;

const testing::TempDirs temp_dirs("fourfold_quantize");

fs::path temp_dir(const std::string& suffix = "") { return temp_dirs.make(suffix); }

// e4m3 keeps 3 mantissa bits: a normal value rounds within 2^-4 of itself, and subnormals (in units of the
// scale) within 2^-10, far below 2^-4 of the block's max (448 units). So every element must lie within
// 2^-4 * (its block's max magnitude) of the original.
void expect_within_fp8_error(const Tensor& original, const Tensor& weight, const Tensor& scale, int64_t block_rows,
                             int64_t block_cols, const std::string& name) {
  const Tensor deq = dequantize_fp8(weight, scale);
  const std::vector<double> a = original.to_vector(), b = deq.to_vector();
  const int64_t out = original.size(0), in = original.size(1);
  const int64_t sc = scale.size(1);
  std::vector<double> block_max(scale.numel(), 0.0);
  for (int64_t r = 0; r < out; ++r)
    for (int64_t c = 0; c < in; ++c) {
      double& m = block_max[(r / block_rows) * sc + c / block_cols];
      m = std::max(m, std::fabs(a[r * in + c]));
    }
  int64_t bad = 0;
  for (int64_t r = 0; r < out; ++r)
    for (int64_t c = 0; c < in; ++c) {
      const double bound = std::ldexp(block_max[(r / block_rows) * sc + c / block_cols], -4);
      if (std::fabs(a[r * in + c] - b[r * in + c]) > bound && bad++ < 3)
        ADD_FAILURE() << name << " [" << r << ", " << c << "]: " << a[r * in + c] << " vs " << b[r * in + c];
    }
  EXPECT_EQ(bad, 0) << name;
}

void check_quantized_folder(const ModelConfig& config, const TensorMap& original, Fp8Recipe recipe) {
  const QuantizedCheckpoint q = quantize_checkpoint(config, original, recipe);
  const fs::path dir = temp_dir(recipe == Fp8Recipe::block ? "block" : "row");
  write_model_folder(dir, q.config, q.weights);
  const LoadedModel m = load_model_folder(dir);
  ASSERT_TRUE(m.config.quantization.has_value());
  EXPECT_EQ(m.config.quantization->weight_block_size.has_value(), recipe == Fp8Recipe::block);
  EXPECT_EQ(m.config.quantization->modules_to_not_convert.at(0), "lm_head");
  for (const WeightSpec& spec : weight_layout(config)) {
    SCOPED_TRACE(spec.name);
    const Tensor& loaded = m.weights.at(spec.name);
    if (spec.role != WeightRole::projection) {
      EXPECT_TRUE(bit_equal(loaded, original.at(spec.name)));
      EXPECT_FALSE(m.weights.count(fp8_scale_name(spec.name)));
      continue;
    }
    const Tensor& scale = m.weights.at(fp8_scale_name(spec.name));
    EXPECT_EQ(loaded.dtype(), DType::f8_e4m3fn);
    EXPECT_EQ(scale.dtype(), DType::f32);
    const int64_t out = spec.shape[0], in = spec.shape[1];
    const Shape expected_scale =
        recipe == Fp8Recipe::block ? Shape{(out + 127) / 128, (in + 127) / 128} : Shape{out, 1};
    EXPECT_EQ(scale.shape(), expected_scale);
    EXPECT_EQ(scale.shape(), fp8_scale_shape(m.config, spec.shape));
    if (recipe == Fp8Recipe::block)
      expect_within_fp8_error(original.at(spec.name), loaded, scale, 128, 128, spec.name);
    else
      expect_within_fp8_error(original.at(spec.name), loaded, scale, 1, in, spec.name);
  }
}

TEST(Quantize, BlockAndRowCheckpointsLoadWithinFp8Error) {
  const ModelConfig config = preset_config("tiny-moe");
  const TensorMap weights = synthetic_weights(config, DType::bf16, 11);
  check_quantized_folder(config, weights, Fp8Recipe::block);
  check_quantized_folder(config, weights, Fp8Recipe::row);
}

TEST(Quantize, PartialBlocksAndBiases) {
  // Sizes that are not multiples of 128 leave partial blocks at the edges; qwen2 adds biases (kept as they are).
  ModelConfig config = preset_config("tiny-qwen3", 1);
  config.model_type = "qwen2";
  config.attention_bias = true;
  config.hidden_size = 160;
  config.num_attention_heads = 5;
  config.num_key_value_heads = 1;
  config.intermediate_size = 200;
  config.vocab_size = 50;
  const TensorMap weights = synthetic_weights(config, DType::bf16, 12);
  check_quantized_folder(config, weights, Fp8Recipe::block);
  check_quantized_folder(config, weights, Fp8Recipe::row);
}

TEST(Quantize, ScalesAreBlockMaxOver448AndZeroBlocksStayZero) {
  ModelConfig config = preset_config("tiny-qwen3", 1);
  TensorMap weights = synthetic_weights(config, DType::bf16, 13);
  const std::string name = layer_weight(0, "mlp.down_proj.weight");   // [128, 256]: two blocks
  Tensor w = Tensor::zeros({128, 256}, DType::bf16);
  w.narrow(1, 128, 128).fill(-3.0);
  w.select(0, 5).select(0, 200).fill(7.0);
  weights[name] = w;
  const QuantizedCheckpoint q = quantize_checkpoint(config, weights, Fp8Recipe::block);
  EXPECT_EQ(q.weights.at(fp8_scale_name(name)).to_vector(), (std::vector<double>{1.0, 7.0f / 448.0f}));
  EXPECT_TRUE(bit_equal(dequantize_fp8(q.weights.at(name), q.weights.at(fp8_scale_name(name))), w.to(DType::f32)));
  EXPECT_TRUE(throws_with<ValueError>([&] { quantize_checkpoint(q.config, q.weights, Fp8Recipe::row); },
                                      {"already FP8"}));
  EXPECT_TRUE(throws_with<ValueError>([] { parse_fp8_recipe("int4"); }, {"fp8-block or fp8-row", "int4"}));
}

// --lm-head: lm_head becomes FP8 with block scales, is no longer listed as not converted, and the decoder runs it
// through scaled_linear: the logits are those of a twin whose lm_head is the dequantized f32 weight.
TEST(Quantize, LmHeadOnRequestDecodesLikeItsDequantizedTwin) {
  const ModelConfig config = preset_config("tiny-moe");
  ASSERT_FALSE(config.tie_word_embeddings);
  const TensorMap weights = synthetic_weights(config, DType::bf16, 21);
  const QuantizedCheckpoint q = quantize_checkpoint(config, weights, Fp8Recipe::block, /*include_lm_head=*/true);
  const Tensor& head = q.weights.at("lm_head.weight");
  const Tensor& scale = q.weights.at(fp8_scale_name("lm_head.weight"));
  EXPECT_EQ(head.dtype(), DType::f8_e4m3fn);
  expect_within_fp8_error(weights.at("lm_head.weight"), head, scale, 128, 128, "lm_head.weight");
  for (const std::string& m : q.config.quantization->modules_to_not_convert) EXPECT_NE(m, "lm_head");
  const fs::path dir = temp_dir("lm_head");
  write_model_folder(dir, q.config, q.weights);
  LoadedModel loaded = load_model_folder(dir);
  TensorMap twin = q.weights;
  twin["lm_head.weight"] = dequantize_fp8(head, scale);
  twin.erase(fp8_scale_name("lm_head.weight"));
  Decoder fp8 = testing::make_decoder(loaded.config, std::move(loaded.weights));
  Decoder f32 = testing::make_decoder(q.config, std::move(twin));
  const std::vector<int64_t> prompt = synthetic_prompt(5, config.vocab_size, 2);
  const Tensor a = fp8.forward(prompt, true), b = f32.forward(prompt, true);
  EXPECT_TRUE(fourfold::testing::all_close(a, b, 1e-5, 1e-5));
  const int64_t step = 7;
  EXPECT_TRUE(fourfold::testing::all_close(fp8.forward(std::span<const int64_t>(&step, 1)), f32.forward(std::span<const int64_t>(&step, 1)),
                                 1e-5, 1e-5));
  // A tied lm_head is the embedding table: nothing to quantize.
  const ModelConfig tied = preset_config("tiny-qwen3");
  EXPECT_TRUE(throws_with<ValueError>(
      [&] { quantize_checkpoint(tied, synthetic_weights(tied, DType::bf16, 3), Fp8Recipe::block, true); },
      {"--lm-head", "tie_word_embeddings"}));
}

TEST(Quantize, MakeModelAndQuantizeCommandsWriteLoadableFolders) {
  const fs::path bf16 = temp_dir("bf16"), fp8 = temp_dir("fp8"), row = temp_dir("row"), again = temp_dir("again");
  const WrittenModel a = make_model("tiny-moe", bf16, "bf16", 7, 1);
  EXPECT_EQ(a.config.num_hidden_layers, 1);
  const LoadedModel la = load_model_folder(bf16);
  EXPECT_EQ(la.config.num_hidden_layers, 1);
  EXPECT_FALSE(la.config.quantization.has_value());
  EXPECT_GT(a.bytes, la.mapped_bytes);

  const WrittenModel b = make_model("tiny-moe", fp8, "fp8", 7, 1);
  const LoadedModel lb = load_model_folder(fp8);
  ASSERT_TRUE(lb.config.quantization.has_value());
  EXPECT_TRUE(lb.config.quantization->weight_block_size.has_value());
  EXPECT_LT(b.bytes, a.bytes);
  for (const char* p : {"gate_proj", "up_proj", "down_proj"})
    for (const char* suffix : {"weight", "weight_scale_inv"}) {
      // Experts and their scales are each one [E, ...] view of the map.
      const Tensor stacked = stacked_experts(lb.config, lb.weights, 0, p, suffix);
      const std::string first = layer_weight(0, std::string("mlp.experts.0.") + p + "." + suffix);
      EXPECT_EQ(stacked.data(), lb.weights.at(first).data()) << first;
      EXPECT_EQ(stacked.size(0), lb.config.num_experts);
    }

  // quantize of the bf16 folder with fp8-block reproduces make-model --dtype fp8 byte for byte.
  quantize_model_folder(bf16, "fp8-block", again);
  for (const auto& [name, t] : lb.weights) EXPECT_TRUE(bit_equal(load_model_folder(again).weights.at(name), t)) << name;

  quantize_model_folder(bf16, "fp8-row", row);
  const LoadedModel lr = load_model_folder(row);
  EXPECT_FALSE(lr.config.quantization->weight_block_size.has_value());
  const std::string q = layer_weight(0, "self_attn.q_proj.weight");
  EXPECT_EQ(lr.weights.at(fp8_scale_name(q)).shape(), (Shape{128, 1}));

  EXPECT_TRUE(throws_with<ValueError>([&] { make_model("tiny-moe", temp_dir("x"), "int8", 1, 1); }, {"int8"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { make_model("huge", temp_dir("x"), "bf16", 1, 1); }, {"huge"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { quantize_model_folder(fp8, "fp8-row", temp_dir("x")); }, {}) ||
              throws_with<ValueError>([&] { quantize_model_folder(fp8, "fp8-row", temp_dir("x")); }, {"FP8"}));
}

}  // namespace
}  // namespace fourfold::model
