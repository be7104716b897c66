// Folders saved by Hugging Face transformers 5 itself (tests/data/transformers, written by
// scripts/make_transformers_fixtures.py): they load, every tier's logits agree with transformers' own, and the
// same folder with its config.json in transformers 4.x's spelling gives bit-identical logits.
#include <filesystem>

#include <gtest/gtest.h>

#include "check/error_metrics.h"
#include "fourfold/policy.h"
#include "model/llm/model_folder.h"
#include "model/model_test_support.h"
#include "model/formats/safetensors.h"
#include "model/temp_dirs.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;

const testing::TempDirs kTemp("fourfold_transformers_folder_test");
const fs::path kFixtures = fs::path(FOURFOLD_TEST_DATA_DIR) / "transformers";
const char* const kModels[] = {"qwen3_moe", "qwen3", "llama3", "qwen2"};

struct Golden {
  std::vector<int64_t> ids;
  Tensor logits;   // f32 [T, V], transformers' forward
};

Golden golden(const std::string& model) {
  SafetensorsFile f = read_safetensors(kFixtures / model / "logits.safetensors");
  Golden g;
  for (auto& [name, t] : f.tensors) {
    if (name == "input_ids")
      for (double v : t.to_vector()) g.ids.push_back(static_cast<int64_t>(v));
    if (name == "logits") g.logits = t.contiguous();
  }
  return g;
}

// The logits of every position of `ids` (one prefill), f32 activations and cache.
Tensor fourfold_logits(const fs::path& dir, const std::vector<int64_t>& ids, const std::string& policy = "") {
  LoadedModel m = load_model_folder(dir);
  Decoder d = testing::make_decoder(m.config, std::move(m.weights), DType::f32, DType::f32, 64);
  ScopedPolicy scope(Policy::parse(policy));
  return d.forward(ids, /*all_logits=*/true).contiguous();
}

// The same folder with config.v4.json as its config.json (weights linked, not copied).
fs::path v4_twin(const std::string& model) {
  const fs::path dir = kTemp.make("_" + model);
  fs::create_symlink(kFixtures / model / "model.safetensors", dir / "model.safetensors");
  fs::copy_file(kFixtures / model / "config.v4.json", dir / "config.json");
  return dir;
}

TEST(TransformersFolders, EveryTierAgreesWithTransformers) {
  for (const char* model : kModels) {
    const Golden g = golden(model);
    ASSERT_EQ(g.ids.size(), 14u) << model;
    for (const char* tier : {"reference", "generic", "dedicated"}) {
      SCOPED_TRACE(std::string(model) + " " + tier);
      const Tensor ours = fourfold_logits(kFixtures / model, g.ids, tier);
      ASSERT_EQ(ours.shape(), g.logits.shape());
      const ErrorStats e = compare_to_reference(ours, g.logits.to(DType::f64));
      // f32 against f32: the two engines round differently, so not exact, but far above what a misread key
      // gives (a wrong rope_theta measured 26 dB, a dropped llama3 scaling 44 dB).
      EXPECT_GT(e.psnr_db, 100.0);
      EXPECT_EQ(top1_agreement_percent(g.logits, ours), 100.0);
    }
  }
}

TEST(TransformersFolders, TheFourXSpellingGivesBitIdenticalLogits) {
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    const Golden g = golden(model);
    const Tensor v5 = fourfold_logits(kFixtures / model, g.ids);
    const Tensor v4 = fourfold_logits(v4_twin(model), g.ids);
    EXPECT_TRUE(compare_to_reference(v4, v5.to(DType::f64)).exact);
    EXPECT_EQ(v4.to_vector(), v5.to_vector());
  }
}

TEST(TransformersFolders, ConfigsOfBothSpellingsReadTheSame) {
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    const ModelConfig v5 = load_model_folder(kFixtures / model).config;
    const ModelConfig v4 = load_model_folder(v4_twin(model)).config;
    EXPECT_EQ(model_config_to_json(v4), model_config_to_json(v5));
    // transformers 5 writes every key it has, except Qwen2's head_dim, which it derives.
    if (std::string(model) == "qwen2")
      EXPECT_EQ(v5.defaults_taken, std::vector<std::string>{"head_dim = 16 (hidden_size / num_attention_heads)"});
    else
      EXPECT_TRUE(v5.defaults_taken.empty()) << v5.defaults_taken.front();
    EXPECT_EQ(v5.eos_token_ids, std::vector<int64_t>{3});
  }
  const ModelConfig moe = load_model_folder(kFixtures / "qwen3_moe").config;
  EXPECT_EQ(moe.num_experts, 12);   // transformers 5 writes num_local_experts
  EXPECT_EQ(moe.rope_theta, 1e6);   // from rope_parameters
  const ModelConfig llama = load_model_folder(kFixtures / "llama3").config;
  ASSERT_TRUE(llama.rope_scaling.has_value());
  EXPECT_EQ(llama.rope_scaling->rope_type, "llama3");
  EXPECT_EQ(llama.rope_scaling->original_max_position_embeddings, 64);
  EXPECT_EQ(llama.rope_theta, 500000.0);
  EXPECT_TRUE(llama.tie_word_embeddings);
  EXPECT_EQ(llama.torch_dtype, DType::f32);   // "dtype": "float32"
}

// transformers stores experts in name order (0, 1, 10, 11, 2, ...), each expert's down, gate and up next to each
// other: every projection is still one strided view of the file, with the router's choices mapped to slots.
TEST(TransformersFolders, NameOrderedExpertsAreUsedInPlace) {
  LoadedModel m = load_model_folder(kFixtures / "qwen3_moe");
  const ModelConfig c = m.config;
  const ModelWeights w = bind_weights(c, std::move(m.weights), DType::f32, "test");
  EXPECT_EQ(w.copied_bytes, 0u);
  EXPECT_TRUE(w.copies.empty()) << w.copies.front();
  for (const LayerWeights& layer : w.layers) {
    ASSERT_TRUE(layer.moe.has_value());
    // Name order of 12 experts: 0 1 10 11 2 3 ... 9, so expert 2 is the fifth in the file.
    EXPECT_EQ(layer.moe->experts.slot_of_expert,
              (std::vector<int64_t>{0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 2, 3}));
    EXPECT_EQ(layer.moe->experts.gate.size(0), 12);
    EXPECT_EQ(layer.moe->experts.gate.stride(0), 3 * c.moe_intermediate_size * c.hidden_size);
  }
}

// --weights copy / populate / map: the same bytes under the tensors, so the same logits; the copy is accounted
// as read into memory, not mapped.
TEST(TransformersFolders, EveryWeightResidencyGivesTheSameLogits) {
  const Golden g = golden("qwen3_moe");
  std::vector<double> first;
  for (WeightResidency r : {WeightResidency::map, WeightResidency::populate, WeightResidency::copy}) {
    SCOPED_TRACE(std::string(residency_name(r)));
    LoadedModel m = load_model_folder(kFixtures / "qwen3_moe", r);
    const uint64_t file = fs::file_size(kFixtures / "qwen3_moe" / "model.safetensors");
    EXPECT_EQ(m.mapped_bytes, r == WeightResidency::copy ? 0u : file);
    EXPECT_EQ(m.file_copy_bytes, r == WeightResidency::copy ? file : 0u);
    Decoder d = testing::make_decoder(m.config, std::move(m.weights), DType::f32, DType::f32, 64);
    const std::vector<double> logits = d.forward(g.ids, true).to_vector();
    if (first.empty()) first = logits;
    EXPECT_EQ(logits, first);
  }
}

TEST(TransformersFolders, GenerationConfigIsRead) {
  const LoadedModel m = load_model_folder(kFixtures / "qwen3");
  ASSERT_TRUE(m.generation.has_value());
  EXPECT_EQ(m.generation->eos_token_ids, std::vector<int64_t>{3});
  EXPECT_EQ(m.generation->bos_token_id, 1);
}

}  // namespace
}  // namespace fourfold::model
