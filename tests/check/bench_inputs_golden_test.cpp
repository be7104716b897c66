// fourfold's seeded inputs against tests/data/bench_inputs/golden.json, which python/fourfold_torch's test
// checks too: a PyTorch record and a fourfold record of one suite are made from bit-identical inputs.
// Written by `python -m fourfold_torch.golden`; a change of the generator must change both producers.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "check/op_bench.h"
#include "core/counter_rng.h"
#include "model/llm/generation.h"
#include "model/vae/synthetic_inputs.h"
#include "model/vae/wan_vae_config.h"

namespace fourfold {
namespace {

nlohmann::json golden() {
  std::ifstream in(std::string(FOURFOLD_TEST_DATA_DIR) + "/bench_inputs/golden.json");
  return nlohmann::json::parse(in);
}

std::string hex_of(const Tensor& t) {
  const auto* bytes = static_cast<const unsigned char*>(t.data());
  std::string out;
  char buf[3];
  for (size_t i = 0; i < static_cast<size_t>(t.numel()) * dtype_size(t.dtype()); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
    out += buf;
  }
  return out;
}

TEST(BenchInputsGolden, CounterBitsMatchThePythonPort) {
  const nlohmann::json g = golden();
  ASSERT_FALSE(g["counter_bits"].empty());
  for (const auto& e : g["counter_bits"]) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx",
                  static_cast<unsigned long long>(counter_bits(e["seed"].get<uint64_t>(), e["counter"].get<uint64_t>())));
    EXPECT_EQ(buf, e["bits"].get<std::string>()) << "seed " << e["seed"] << " counter " << e["counter"];
  }
}

TEST(BenchInputsGolden, BenchTensorsHaveTheGoldenBytesInEveryDtype) {
  const nlohmann::json g = golden();
  ASSERT_GE(g["bench_tensors"].size(), 6u);
  for (const auto& e : g["bench_tensors"]) {
    const Tensor t = bench_tensor({e["numel"].get<int64_t>()}, parse_dtype(e["dtype"].get<std::string>()),
                                  e["seed"].get<uint64_t>(), e["scale"].get<double>());
    EXPECT_EQ(hex_of(t), e["hex"].get<std::string>()) << e["dtype"] << " seed " << e["seed"];
  }
}

TEST(BenchInputsGolden, FillUniformScalesMatch) {
  const nlohmann::json e = golden()["fill_uniform_f32"];
  Tensor t = Tensor::empty({e["numel"].get<int64_t>()}, DType::f32);
  t.fill_uniform(e["seed"].get<uint64_t>(), e["low"].get<double>(), e["high"].get<double>());
  EXPECT_EQ(hex_of(t), e["hex"].get<std::string>());
}

TEST(BenchInputsGolden, SyntheticPromptsMatch) {
  const nlohmann::json g = golden();   // operator[] of a temporary would not keep it alive through the loop
  for (const auto& e : g["synthetic_prompts"])
    EXPECT_EQ(model::synthetic_prompt(e["n"].get<int64_t>(), e["vocab"].get<int64_t>(), e["seed"].get<uint64_t>()),
              e["ids"].get<std::vector<int64_t>>());
}

TEST(BenchInputsGolden, VaeLatentsAndSceneMatch) {
  const nlohmann::json g = golden();
  ASSERT_GE(g["vae_latents"].size(), 2u);
  for (const auto& e : g["vae_latents"]) {
    const std::string file = std::string(FOURFOLD_TEST_DATA_DIR) + "/diffusers/" + e["config"].get<std::string>() + "/config.json";
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const model::WanVaeConfig c = model::parse_wan_vae_config(text, file);
    ASSERT_FALSE(c.latents_std.empty()) << file;   // the statistics are part of what is pinned
    const Tensor z = model::seeded_latents(c, e["frames"].get<int64_t>(), e["height"].get<int64_t>(),
                                           e["width"].get<int64_t>(), e["seed"].get<uint64_t>());
    EXPECT_EQ(hex_of(z), e["hex"].get<std::string>()) << e["config"] << " seed " << e["seed"];
  }
  const nlohmann::json& s = g["vae_scene"];
  const Tensor scene = model::synthetic_scene(s["frames"].get<int64_t>(), s["height"].get<int64_t>(),
                                              s["width"].get<int64_t>(), s["seed"].get<uint64_t>());
  EXPECT_EQ(hex_of(scene), s["hex"].get<std::string>());
}

}  // namespace
}  // namespace fourfold
