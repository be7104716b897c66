// FP4 folders in compressed-tensors' layout written by scripts/make_fp4_fixtures.py (not by fourfold): the
// transformers qwen3_moe fixture with every projection quantized to NVFP4 and to MXFP4. Every tier's logits must
// agree with transformers' own forward on the dequantized weights, in float32 and in float64.
#include <filesystem>

#include <gtest/gtest.h>

#include "check/error_metrics.h"
#include "fourfold/policy.h"
#include "model/formats/safetensors.h"
#include "model/llm/model_folder.h"
#include "model/model_test_support.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(FOURFOLD_TEST_DATA_DIR) / "transformers";

struct Golden {
  std::vector<int64_t> ids;
  Tensor logits, logits_f64;
};

Golden golden(const fs::path& dir) {
  SafetensorsFile f = read_safetensors(dir / "logits.safetensors");
  Golden g;
  for (auto& [name, t] : f.tensors) {
    if (name == "input_ids")
      for (double v : t.to_vector()) g.ids.push_back(static_cast<int64_t>(v));
    if (name == "logits") g.logits = t.contiguous();
    if (name == "logits_f64") g.logits_f64 = t.contiguous();
  }
  return g;
}

TEST(Fp4Folders, EveryTierAgreesWithTransformersOnTheDequantizedWeights) {
  for (const char* name : {"qwen3_moe_nvfp4", "qwen3_moe_mxfp4"}) {
    const Golden g = golden(kFixtures / name);
    ASSERT_FALSE(g.ids.empty());
    for (const char* tier : {"reference", "generic", "dedicated"}) {
      SCOPED_TRACE(std::string(name) + " " + tier);
      LoadedModel m = load_model_folder(kFixtures / name);
      ASSERT_TRUE(m.config.fp4.has_value());
      Decoder d = testing::make_decoder(m.config, std::move(m.weights), DType::f32, DType::f32, 64);
      ScopedPolicy scope(Policy::parse(tier));
      const Tensor ours = d.forward(g.ids, /*all_logits=*/true).contiguous();
      const ErrorStats f32 = compare_to_reference(ours, g.logits.to(DType::f64));
      const ErrorStats f64 = compare_to_reference(ours, g.logits_f64);
      EXPECT_GT(f32.psnr_db, 100.0);
      EXPECT_GT(f64.psnr_db, 100.0);
      EXPECT_EQ(top1_agreement_percent(g.logits, ours), 100.0);
      RecordProperty(std::string(name) + "_" + tier + "_db_f64", std::to_string(f64.psnr_db));
      std::printf("%s %s: %.1f dB against transformers f32, %.1f dB against f64\n", name, tier, f32.psnr_db, f64.psnr_db);
    }
  }
}

}  // namespace
}  // namespace fourfold::model
