// moe_experts with FP4 experts (NVFP4 with per-expert global scales, MXFP4): the dedicated tier at every ISA
// level the host has and the generic tier against the float64 reference, for decode routing (a few rows per
// expert) and prefill routing (an expert of more rows than one GEMV call takes, an empty one), and the refusals.
#include <string>
#include <vector>

#include "backends/dedicated_check.h"
#include "backends/tier_check.h"
#include "core/fp4_blocks.h"
#include "fourfold/moe.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

Tensor random_codes(const Shape& shape, uint64_t seed) {
  Tensor w = Tensor::empty(shape, DType::f4_e2m1fn_x2);
  auto* b = static_cast<uint8_t*>(w.data());
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < w.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    b[i] = static_cast<uint8_t>(s >> 56);
  }
  return w;
}

MoeExpertWeights fp4_experts(int64_t experts, int64_t hidden, int64_t inter, bool nv, uint64_t seed) {
  const int64_t block = nv ? 16 : 32;
  const DType sdt = nv ? DType::f8_e4m3fn : DType::f8_e8m0fnu;
  MoeExpertWeights w;
  w.gate = random_codes({experts, inter, hidden / 2}, seed);
  w.up = random_codes({experts, inter, hidden / 2}, seed + 1);
  w.down = random_codes({experts, hidden, inter / 2}, seed + 2);
  // Scales near 1 / (6 sqrt(in)) keep the products of two layers of order one.
  w.gate_scale = testing::rand_uniform({experts, inter, hidden / block}, sdt, seed + 3, 0.02, 0.06);
  w.up_scale = testing::rand_uniform({experts, inter, hidden / block}, sdt, seed + 4, 0.02, 0.06);
  w.down_scale = testing::rand_uniform({experts, hidden, inter / block}, sdt, seed + 5, 0.02, 0.06);
  if (nv) {
    w.gate_global = testing::rand_uniform({experts}, DType::f32, seed + 6, 0.5, 2.0);
    w.up_global = testing::rand_uniform({experts}, DType::f32, seed + 7, 0.5, 2.0);
    w.down_global = testing::rand_uniform({experts}, DType::f32, seed + 8, 0.5, 2.0);
  }
  return w;
}

struct Routing {
  Tensor token, weight, offs;
};

// Rows sorted by expert from per-expert token lists.
Routing route(const std::vector<std::vector<int>>& tokens_of_expert) {
  std::vector<double> token, weight, offs;
  for (const auto& list : tokens_of_expert) {
    for (int t : list) {
      token.push_back(t);
      weight.push_back(0.25 + 0.125 * static_cast<double>(token.size() % 5));
    }
    offs.push_back(static_cast<double>(token.size()));
  }
  const int64_t rows = static_cast<int64_t>(token.size());
  return {Tensor::from_vector(token, {rows}, DType::i32), Tensor::from_vector(weight, {rows}, DType::f32),
          Tensor::from_vector(offs, {static_cast<int64_t>(offs.size())}, DType::i32)};
}

testing::Tolerance tolerance(DType out) {
  return out == DType::f32 ? testing::Tolerance{1e-4, 1e-4} : testing::product_tolerance(out);
}

TEST(Fp4MoeExperts, DecodeAndPrefillRoutingMatchTheReference) {
  const int64_t hidden = 96, inter = 64;
  std::vector<int> many;
  for (int t = 0; t < 19; ++t) many.push_back(t);   // 19 rows: three GEMV calls of at most 8
  const std::vector<std::vector<std::vector<int>>> routings = {{{0}, {}, {0}, {}},          // decode: one token
                                                              {{0, 2}, {1}, {}, {0, 1, 2}},   // a few tokens
                                                              {many, {}, {3, 4}, {18}}};      // prefill
  uint64_t seed = 50;
  for (bool nv : {true, false})
    for (DType xdt : {DType::f32, DType::bf16})
      for (const auto& r : routings) {
        const MoeExpertWeights w = fp4_experts(4, hidden, inter, nv, seed++);
        const int64_t tokens = r == routings[2] ? 19 : 3;
        const Tensor x = testing::randn({tokens, hidden}, xdt, seed++);
        const Routing ro = route(r);
        const std::string what = std::string(nv ? "nvfp4" : "mxfp4") + " " + std::string(dtype_name(xdt)) + " " +
                                 std::to_string(tokens) + " tokens";
        const auto call = [&] { return moe_experts(x, w, ro.token, ro.weight, ro.offs); };
        EXPECT_TRUE(testing::matches_at_every_level(call, true, &tolerance)) << what;
        tier_check::expect_matches("moe_experts", Tier::generic, [&] { return tier_check::Outputs{call()}; },
                                   {1e-4, 1e-4}, what, true, false);
      }
}

TEST(Fp4MoeExperts, BadExpertsAreRefusedByName) {
  const int64_t hidden = 64, inter = 32;
  const MoeExpertWeights good = fp4_experts(2, hidden, inter, true, 1);
  const Tensor x = testing::randn({1, hidden}, DType::f32, 2);
  const Routing ro = route({{0}, {}});
  MoeExpertWeights bad = good;
  bad.up_scale.reset();
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { moe_experts(x, bad, ro.token, ro.weight, ro.offs); },
                                               {"moe_experts", "up_scale"}));
  bad = good;
  bad.down_scale = Tensor::full({2, hidden, inter / 32}, 1.0, DType::f8_e4m3fn);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { moe_experts(x, bad, ro.token, ro.weight, ro.offs); },
                                               {"moe_experts", "down_scale"}));
  bad = good;
  bad.gate_global = Tensor::full({3}, 1.0, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { moe_experts(x, bad, ro.token, ro.weight, ro.offs); },
                                               {"moe_experts", "gate_global", "[2]"}));
  bad = good;
  bad.down = testing::randn({2, hidden, inter}, DType::f32, 3);
  bad.down_scale.reset();
  bad.down_global.reset();
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { moe_experts(x, bad, ro.token, ro.weight, ro.offs); },
                                               {"moe_experts", "FP4 in all of gate, up and down"}));
}

}  // namespace
}  // namespace fourfold
