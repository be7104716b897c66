// Model folders: written by write_model_folder (one file or shards) and loaded back bit-exact; every missing,
// extra or misshapen tensor and every broken index is a FormatError naming the file and the tensor.
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/llm/model_folder.h"
#include "model/formats/safetensors.h"
#include "model/llm/weight_layout.h"
#include "model/temp_dirs.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;
using fourfold::testing::bit_equal;
using fourfold::testing::throws_with;

const testing::TempDirs temp_dirs("fourfold_folder");

fs::path temp_dir(const std::string& suffix = "") { return temp_dirs.make(suffix); }

void expect_loads_back(const fs::path& dir, const ModelConfig& config, const TensorMap& weights) {
  const LoadedModel m = load_model_folder(dir);
  EXPECT_EQ(model_config_to_json(m.config), model_config_to_json(config));
  ASSERT_EQ(m.weights.size(), weights.size());
  for (const auto& [name, t] : weights) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(m.weights.count(name));
    EXPECT_TRUE(bit_equal(m.weights.at(name), t));
    EXPECT_FALSE(m.weights.at(name).storage()->from_allocator());   // used in place
  }
  EXPECT_TRUE(m.copied.empty());
}

TEST(ModelFolder, OneFileRoundTripsForEveryArchitecture) {
  for (const char* preset : {"tiny-moe", "tiny-qwen3", "tiny-llama"}) {
    SCOPED_TRACE(preset);
    const fs::path dir = temp_dir(preset);
    const ModelConfig config = preset_config(preset, 1);
    const TensorMap weights = synthetic_weights(config, DType::bf16, 3);
    const uint64_t written = write_model_folder(dir, config, weights);
    EXPECT_TRUE(fs::exists(dir / "model.safetensors"));
    EXPECT_FALSE(fs::exists(dir / "model.safetensors.index.json"));
    EXPECT_EQ(written, fs::file_size(dir / "model.safetensors") + fs::file_size(dir / "config.json"));
    expect_loads_back(dir, config, weights);
    EXPECT_EQ(load_model_folder(dir).mapped_bytes, fs::file_size(dir / "model.safetensors"));
  }
}

TEST(ModelFolder, Qwen2BiasesAndF32RoundTrip) {
  ModelConfig config = preset_config("tiny-qwen3", 1);
  config.model_type = "qwen2";
  config.attention_bias = true;
  config.torch_dtype = DType::f32;
  const TensorMap weights = synthetic_weights(config, DType::f32, 4);
  const fs::path dir = temp_dir();
  write_model_folder(dir, config, weights);
  expect_loads_back(dir, config, weights);
}

TEST(ModelFolder, ShardsRoundTripAndKeepEachExpertGroupTogether) {
  const ModelConfig config = preset_config("tiny-moe");
  const TensorMap weights = synthetic_weights(config, DType::bf16, 5);
  const fs::path dir = temp_dir();
  write_model_folder(dir, config, weights, 200 << 10);
  ASSERT_TRUE(fs::exists(dir / "model.safetensors.index.json"));
  EXPECT_FALSE(fs::exists(dir / "model.safetensors"));
  expect_loads_back(dir, config, weights);
  const LoadedModel m = load_model_folder(dir);
  std::set<std::string> files;
  for (const auto& [name, file] : m.file_of) files.insert(file);
  EXPECT_GE(files.size(), 3u);
  EXPECT_TRUE(files.count("model-00001-of-0000" + std::to_string(files.size()) + ".safetensors"));
  for (int64_t l = 0; l < config.num_hidden_layers; ++l)
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
      const Tensor stacked = stacked_experts(m.config, m.weights, l, p);
      const Tensor& first = m.weights.at(expert_weight(l, 0, p));
      EXPECT_EQ(stacked.data(), first.data()) << "a view, not a copy";
      EXPECT_EQ(stacked.size(0), config.num_experts);
      for (int64_t e = 0; e < config.num_experts; ++e) {
        EXPECT_EQ(m.file_of.at(expert_weight(l, e, p)), m.file_of.at(expert_weight(l, 0, p)));
        EXPECT_TRUE(bit_equal(stacked.select(0, e), weights.at(expert_weight(l, e, p))));
      }
    }
  // Rewriting as one file removes the shards and the index.
  write_model_folder(dir, config, weights);
  EXPECT_FALSE(fs::exists(dir / "model.safetensors.index.json"));
  EXPECT_FALSE(fs::exists(dir / ("model-00001-of-0000" + std::to_string(files.size()) + ".safetensors")));
  expect_loads_back(dir, config, weights);
}

// A valid folder whose model.safetensors is then replaced by `tensors`.
fs::path folder_with(const ModelConfig& config, const TensorMap& tensors) {
  const fs::path dir = temp_dir();
  write_model_folder(dir, config, synthetic_weights(config, DType::bf16, 1));
  write_safetensors(dir / "model.safetensors", {tensors.begin(), tensors.end()});
  return dir;
}

TEST(ModelFolder, MissingExtraAndMismatchedTensorsNameFileAndTensor) {
  const ModelConfig config = preset_config("tiny-moe", 1);
  const TensorMap good = synthetic_weights(config, DType::bf16, 1);
  const std::string router = layer_weight(0, "mlp.gate.weight");
  const std::string expert = expert_weight(0, 3, "up_proj");
  const auto rejects = [&](const TensorMap& tensors, std::vector<std::string> fragments) {
    const fs::path dir = folder_with(config, tensors);
    fragments.push_back(dir.string());
    return throws_with<FormatError>([&] { load_model_folder(dir); }, fragments);
  };
  TensorMap w = good;
  w.erase(expert);
  EXPECT_TRUE(rejects(w, {"tensor " + expert, "missing", "bfloat16 [64, 128]"}));
  w = good;
  w["model.layers.0.mlp.shared_expert.weight"] = Tensor::zeros({4}, DType::bf16);
  EXPECT_TRUE(rejects(w, {"model.safetensors", "tensor model.layers.0.mlp.shared_expert.weight", "extra"}));
  w = good;
  w[router] = Tensor::zeros({7, 128}, DType::bf16);
  EXPECT_TRUE(rejects(w, {"model.safetensors", "tensor " + router, "bfloat16 [8, 128]", "bfloat16 [7, 128]"}));
  w = good;
  w[router] = Tensor::zeros({8, 128}, DType::f32);
  EXPECT_TRUE(rejects(w, {"model.safetensors", "tensor " + router, "bfloat16 [8, 128]", "float32 [8, 128]"}));
  // An FP8 config with a missing scale.
  ModelConfig fp8 = config;
  fp8.quantization = Fp8Quantization{};
  EXPECT_TRUE(throws_with<FormatError>([&] { check_weights(fp8, good, "here"); }, {"here", "float8_e4m3fn"}));
}

TEST(ModelFolder, BrokenFoldersAndIndexesNameWhatIsWrong) {
  const ModelConfig config = preset_config("tiny-qwen3", 1);
  const TensorMap weights = synthetic_weights(config, DType::bf16, 1);
  const fs::path dir = temp_dir();
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); }, {"config.json"}));
  write_model_folder(dir, config, weights);
  fs::remove(dir / "model.safetensors");
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); }, {dir.string(), "model.safetensors"}));

  write_model_folder(dir, config, weights, 64 << 10);
  const fs::path index = dir / "model.safetensors.index.json";
  const std::string text = [&] {
    std::ifstream in(index);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const auto with_index = [&](const std::string& t) { std::ofstream(index, std::ios::trunc) << t; };
  with_index(text.substr(0, text.size() / 2));
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); }, {index.string(), "valid JSON"}));
  with_index(R"({"weight_map": {"model.norm.weight": "../elsewhere.safetensors"}})");
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); },
                                       {index.string(), "tensor model.norm.weight", "a file name in this folder"}));
  // A tensor sharing its shard with others, and another shard.
  nlohmann::json j = nlohmann::json::parse(text);
  std::map<std::string, int> per_file;
  for (const auto& [tensor, file] : j["weight_map"].items()) ++per_file[file.get<std::string>()];
  std::string moved, holder, other;
  for (const auto& [tensor, file] : j["weight_map"].items())
    if (per_file[file.get<std::string>()] >= 2) {
      moved = tensor;
      holder = file;
    }
  for (const auto& [file, count] : per_file)
    if (file != holder) other = file;
  ASSERT_FALSE(moved.empty());
  ASSERT_FALSE(other.empty());
  j["weight_map"][moved] = other;   // the index says it is elsewhere
  with_index(j.dump());
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); },
                                       {holder, "tensor " + moved, "listed under " + other}));
  j["weight_map"].erase(moved);     // the index forgets it: its shard holds a tensor the index does not list
  with_index(j.dump());
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); }, {holder, "tensor " + moved, "not listed"}));
  // The index lists a tensor no shard holds.
  j = nlohmann::json::parse(text);
  j["weight_map"]["model.layers.9.ghost.weight"] = other;
  with_index(j.dump());
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); },
                                       {other, "tensor model.layers.9.ghost.weight", "no such tensor"}));
  // A truncated shard.
  with_index(text);
  fs::resize_file(dir / other, fs::file_size(dir / other) - 100);
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); }, {other, "tensor"}));
}

TEST(ModelFolder, WriterChecksTheWeightsFirst) {
  const ModelConfig config = preset_config("tiny-qwen3", 1);
  TensorMap weights = synthetic_weights(config, DType::bf16, 1);
  weights.erase("model.norm.weight");
  EXPECT_TRUE(throws_with<FormatError>([&] { write_model_folder(temp_dir(), config, weights); },
                                       {"write_model_folder", "model.norm.weight"}));
}

}  // namespace
}  // namespace fourfold::model
