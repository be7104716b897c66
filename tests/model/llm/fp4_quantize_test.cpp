// FP4 checkpoints (compressed-tensors NVFP4 and MXFP4): quantize, write in compressed-tensors' names and dtypes,
// load, bind and decode like the f32 twin of the dequantized weights; make-model and quantize write loadable
// folders; bad FP4 folders are refused by name.
#include <cmath>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/fp4_blocks.h"
#include "model/formats/safetensors.h"
#include "model/llm/fp4_checkpoint.h"
#include "model/llm/generation.h"
#include "model/llm/model_folder.h"
#include "model/llm/model_maker.h"
#include "model/llm/quantize.h"
#include "model/llm/weight_layout.h"
#include "model/temp_dirs.h"
#include "model/model_test_support.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;
using fourfold::testing::bit_equal;
using fourfold::testing::throws_with;

const testing::TempDirs temp_dirs("fourfold_fp4");

// The f32 twin of a quantized checkpoint: every FP4 projection replaced by the f32 values it stands for.
TensorMap dequantized_twin(const ModelConfig& config, const TensorMap& q, ModelConfig& twin_config) {
  TensorMap twin = q;
  for (const WeightSpec& spec : weight_layout(config)) {
    if (!stored_as_fp4(config, spec)) continue;
    const Tensor& codes = q.at(spec.name);
    const Tensor& scale = q.at(fp4_scale_name(spec.name));
    OptTensor global;
    if (q.count(fp4_global_name(spec.name))) global = fp4_global_multiplier(q.at(fp4_global_name(spec.name))).view({});
    Tensor w = Tensor::empty(spec.shape, DType::f32);
    fp4_rows_f32(codes, scale, fp4_global_value(global ? &*global : nullptr), 0, spec.shape[0], w.data_as<float>());
    twin[spec.name] = w;
    twin.erase(fp4_scale_name(spec.name));
    twin.erase(fp4_global_name(spec.name));
  }
  twin_config = config;
  twin_config.fp4.reset();
  return twin;
}

TEST(Fp4Quantize, ExpertsRoundTripThroughCompressedTensorsNamesAndDecodeLikeTheirTwin) {
  const ModelConfig config = preset_config("tiny-moe");
  const TensorMap weights = synthetic_weights(config, DType::bf16, 31);
  for (Fp4Format format : {Fp4Format::nvfp4, Fp4Format::mxfp4}) {
    const bool nv = format == Fp4Format::nvfp4;
    SCOPED_TRACE(nv ? "nvfp4" : "mxfp4");
    const QuantizedCheckpoint q = quantize_checkpoint_fp4(config, weights, format);
    const fs::path dir = temp_dirs.make(nv ? "nv" : "mx");
    write_model_folder(dir, q.config, q.weights);
    // On disk: compressed-tensors' names and dtypes.
    const SafetensorsFile file = read_safetensors(dir / "model.safetensors", WeightResidency::map);
    std::map<std::string, DType> on_disk;
    for (const auto& [name, t] : file.tensors) on_disk[name] = t.dtype();
    const std::string expert = layer_weight(0, "mlp.experts.3.up_proj.");
    EXPECT_EQ(on_disk.at(expert + "weight_packed"), DType::u8);
    EXPECT_EQ(on_disk.at(expert + "weight_scale"), nv ? DType::f8_e4m3fn : DType::u8);
    EXPECT_EQ(on_disk.count(expert + "weight_global_scale"), nv ? 1u : 0u);
    EXPECT_EQ(on_disk.count(expert + "weight"), 0u);

    LoadedModel m = load_model_folder(dir);
    ASSERT_TRUE(m.config.fp4.has_value());
    EXPECT_EQ(m.config.fp4->nv, nv);
    for (const WeightSpec& spec : weight_layout(config)) {
      const Tensor& t = m.weights.at(spec.name);
      if (stored_as_fp4(m.config, spec)) {
        EXPECT_NE(spec.name.find(".mlp.experts."), std::string::npos) << spec.name;
        EXPECT_EQ(t.dtype(), DType::f4_e2m1fn_x2) << spec.name;
        EXPECT_TRUE(bit_equal(t.view_dtype(DType::u8), q.weights.at(spec.name).view_dtype(DType::u8))) << spec.name;
      } else {
        EXPECT_TRUE(bit_equal(t, weights.at(spec.name))) << spec.name;
      }
    }
    ModelConfig twin_config;
    TensorMap twin = dequantized_twin(q.config, q.weights, twin_config);
    Decoder fp4 = testing::make_decoder(m.config, std::move(m.weights));
    Decoder f32 = testing::make_decoder(twin_config, std::move(twin));
    const std::vector<int64_t> prompt = synthetic_prompt(20, config.vocab_size, 2);   // 20 rows: the experts' prefill
    EXPECT_TRUE(fourfold::testing::all_close(fp4.forward(prompt, true), f32.forward(prompt, true), 1e-4, 1e-4));
    const int64_t step = 7;
    EXPECT_TRUE(fourfold::testing::all_close(fp4.forward(std::span<const int64_t>(&step, 1)),
                                             f32.forward(std::span<const int64_t>(&step, 1)), 1e-4, 1e-4));
  }
}

// Every value within the e2m1 rounding of its block: half the gap between neighbouring codes at its magnitude,
// at most a quarter of the block's unit times 2 above 4 units (the code 4 -> 6 gap), or the saturation at 6 units.
TEST(Fp4Quantize, ValuesAreWithinTheirBlocksRounding) {
  const ModelConfig config = preset_config("tiny-qwen3");
  const TensorMap weights = synthetic_weights(config, DType::bf16, 5);
  for (Fp4Format format : {Fp4Format::nvfp4, Fp4Format::mxfp4}) {
    const QuantizedCheckpoint q = quantize_checkpoint_fp4(config, weights, format, /*all_projections=*/true);
    const std::string name = layer_weight(0, "self_attn.q_proj.weight");
    ASSERT_EQ(q.weights.at(name).dtype(), DType::f4_e2m1fn_x2);
    if (weights.count("lm_head.weight")) EXPECT_TRUE(bit_equal(q.weights.at("lm_head.weight"), weights.at("lm_head.weight")));
    const Tensor& scale = q.weights.at(fp4_scale_name(name));
    OptTensor global;
    if (q.weights.count(fp4_global_name(name))) global = fp4_global_multiplier(q.weights.at(fp4_global_name(name))).view({});
    const std::vector<double> original = weights.at(name).to_vector();
    const int64_t out = weights.at(name).size(0), in = weights.at(name).size(1), block = fp4_block_size(scale.dtype());
    int64_t bad = 0;
    for (int64_t r = 0; r < out; ++r)
      for (int64_t k = 0; k < in; ++k) {
        const double unit = fp4_scale_value(scale.dtype(), static_cast<const uint8_t*>(scale.data())[r * (in / block) + k / block]) *
                            fp4_global_value(global ? &*global : nullptr);
        const double x = original[r * in + k], y = fp4_weight_at(q.weights.at(name), scale, fp4_global_value(global ? &*global : nullptr), 0, r, k);
        const double a = std::fabs(x) / unit;
        const double bound = (a <= 2 ? 0.25 : a <= 4 ? 0.5 : a <= 6 ? 1.0 : a - 6) * unit * 1.001;
        if (std::fabs(x - y) > bound && bad++ < 3) ADD_FAILURE() << name << " [" << r << ", " << k << "] " << x << " vs " << y;
      }
    EXPECT_EQ(bad, 0);
  }
}

TEST(Fp4Quantize, MakeModelAndQuantizeWriteLoadableFolders) {
  const fs::path bf16 = temp_dirs.make("bf16"), nv = temp_dirs.make("make-nv"), again = temp_dirs.make("again");
  const WrittenModel a = make_model("tiny-moe", bf16, "bf16", 7, 1);
  const WrittenModel b = make_model("tiny-moe", nv, "nvfp4", 7, 1);
  EXPECT_LT(b.bytes, a.bytes);
  const LoadedModel lb = load_model_folder(nv);
  ASSERT_TRUE(lb.config.fp4.has_value());
  quantize_model_folder(bf16, "nvfp4", again);
  for (const auto& [name, t] : lb.weights) EXPECT_TRUE(bit_equal(load_model_folder(again).weights.at(name), t)) << name;
  EXPECT_TRUE(throws_with<ValueError>([&] { quantize_model_folder(nv, "mxfp4", temp_dirs.make("x")); }, {"already"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { quantize_model_folder(bf16, "fp8-row", temp_dirs.make("x"), kDefaultMaxShardBytes, false, true); },
                                      {"--all-projections"}));
}

TEST(Fp4Quantize, BadFp4FoldersAreRefusedByName) {
  const ModelConfig config = preset_config("tiny-moe", 1);
  const QuantizedCheckpoint q = quantize_checkpoint_fp4(config, synthetic_weights(config, DType::bf16, 3), Fp4Format::nvfp4);
  const std::string packed = layer_weight(0, "mlp.experts.1.gate_proj.weight");
  {
    TensorMap bad = q.weights;
    bad[packed] = Tensor::zeros(bad.at(packed).shape(), DType::f4_e2m1fn_x2);
    bad[fp4_scale_name(packed)] = Tensor::zeros({1, 1}, DType::f8_e4m3fn);
    const fs::path dir = temp_dirs.make("badscale");
    EXPECT_TRUE(throws_with<FormatError>([&] { write_model_folder(dir, q.config, bad); }, {fp4_scale_name(packed)}));
  }
  // A folder whose config asks for 32-value groups under NVFP4.
  const fs::path dir = temp_dirs.make("group");
  write_model_folder(dir, q.config, q.weights);
  std::string text = read_regular_file(dir / "config.json");
  const size_t at = text.find("\"group_size\": 16");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 16, "\"group_size\": 32");
  write_file_atomically(dir / "config.json", text);
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); }, {"config.json", "group_size", "16"}));
}

}  // namespace
}  // namespace fourfold::model
