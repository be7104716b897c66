// moe_block and moe_experts: against a hand loop written here (float64, Qwen3-MoE semantics) on small cases on
// every tier of moe_experts (dedicated at every host ISA level), bf16 tiers against the reference, fp8 experts
// on every tier, routing edge cases
// (tokens without rows, a token twice in one expert, empty experts), prefill-sized experts across the packed
// GEMM's tile edges, 1 vs 2 threads, and bad arguments
// naming the op and the argument.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "backends/cpu/isa.h"
#include "fourfold/moe.h"
#include "fourfold/parallel.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;
using testing::throws_with;

struct Model {
  Tensor x, router;
  MoeExpertWeights w;
};

// gate, up [E, I, H], down [E, H, I]; fp8: e4m3fn weights and f32 block scales.
Model make(int64_t tokens, int64_t hidden, int64_t inter, int64_t experts, DType dtype, bool fp8, uint64_t seed) {
  Model m;
  m.x = randn({tokens, hidden}, dtype, seed);
  m.router = randn({experts, hidden}, dtype, seed + 1, 0.5);
  const auto weight = [&](Shape shape, uint64_t s, double scale, OptTensor& block_scale) {
    if (!fp8) return randn(shape, dtype, s, scale);
    block_scale = testing::rand_uniform({shape[0], (shape[1] + 127) / 128, (shape[2] + 127) / 128}, DType::f32, s + 100,
                                        0.5 * scale / 16, 1.5 * scale / 16);
    return randn(shape, DType::f32, s, 16.0).to(DType::f8_e4m3fn);
  };
  m.w.gate = weight({experts, inter, hidden}, seed + 2, 1.0 / std::sqrt(static_cast<double>(hidden)), m.w.gate_scale);
  m.w.up = weight({experts, inter, hidden}, seed + 3, 1.0 / std::sqrt(static_cast<double>(hidden)), m.w.up_scale);
  m.w.down = weight({experts, hidden, inter}, seed + 4, 1.0 / std::sqrt(static_cast<double>(inter)), m.w.down_scale);
  return m;
}

// A weight [E, out, in] as float64 values, dequantized.
std::vector<double> dequantized(const Tensor& w, const OptTensor& scale) {
  std::vector<double> v = w.to_vector();
  if (!scale) return v;
  const std::vector<double> s = scale->to_vector();
  const int64_t out = w.size(1), in = w.size(2), sb = scale->size(1), sc = scale->size(2);
  for (int64_t e = 0; e < w.size(0); ++e)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i)
        v[static_cast<size_t>((e * out + o) * in + i)] *= s[static_cast<size_t>((e * sb + o / 128) * sc + i / 128)];
  return v;
}

// Qwen3-MoE's sparse block in float64 (the router's logits rounded to x's dtype, as its nn.Linear does).
std::vector<double> hand_loop(const Model& m, int64_t top_k, bool norm) {
  const int64_t T = m.x.size(0), H = m.x.size(1), E = m.router.size(0), I = m.w.gate.size(1);
  const std::vector<double> x = m.x.to_vector(), r = m.router.to_vector();
  const std::vector<double> g = dequantized(m.w.gate, m.w.gate_scale), u = dequantized(m.w.up, m.w.up_scale),
                            d = dequantized(m.w.down, m.w.down_scale);
  std::vector<double> out(static_cast<size_t>(T * H), 0.0);
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> p(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) {
      double l = 0;
      for (int64_t h = 0; h < H; ++h) l += x[static_cast<size_t>(t * H + h)] * r[static_cast<size_t>(e * H + h)];
      p[static_cast<size_t>(e)] = Tensor::from_vector({l}, {1}, m.x.dtype()).item();
    }
    const double mx = *std::max_element(p.begin(), p.end());
    double sum = 0;
    for (double& v : p) sum += (v = std::exp(v - mx));
    for (double& v : p) v /= sum;
    std::vector<int64_t> order(static_cast<size_t>(E));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b]; });
    double chosen = 0;
    for (int64_t j = 0; j < top_k; ++j) chosen += p[static_cast<size_t>(order[j])];
    for (int64_t j = 0; j < top_k; ++j) {
      const int64_t e = order[static_cast<size_t>(j)];
      const double w = norm ? p[static_cast<size_t>(e)] / chosen : p[static_cast<size_t>(e)];
      std::vector<double> act(static_cast<size_t>(I));
      for (int64_t i = 0; i < I; ++i) {
        double gv = 0, uv = 0;
        for (int64_t h = 0; h < H; ++h) {
          gv += x[static_cast<size_t>(t * H + h)] * g[static_cast<size_t>((e * I + i) * H + h)];
          uv += x[static_cast<size_t>(t * H + h)] * u[static_cast<size_t>((e * I + i) * H + h)];
        }
        act[static_cast<size_t>(i)] = gv / (1 + std::exp(-gv)) * uv;
      }
      for (int64_t h = 0; h < H; ++h) {
        double y = 0;
        for (int64_t i = 0; i < I; ++i) y += act[static_cast<size_t>(i)] * d[static_cast<size_t>((e * H + h) * I + i)];
        out[static_cast<size_t>(t * H + h)] += w * y;
      }
    }
  }
  return out;
}

// The tier moe_experts last ran on.
Tier experts_tier() {
  for (const DispatchCount& d : dispatch_counts())
    if (d.op == "moe_experts")
      for (int t = kTierCount - 1; t >= 0; --t)
        if (d.calls[t] > 0) return static_cast<Tier>(t);
  return Tier::reference;
}

// moe_block with moe_experts forced to `tier` (the router ops stay on their usual tiers: the same routing).
Policy experts_on(std::string_view tier) {
  std::string text = "moe_experts=";
  text += tier;
  return Policy::parse(text);
}

Tensor block_on(const std::string& tier, const Model& m, int64_t top_k, bool norm, Tier expect) {
  ScopedPolicy scope(experts_on(tier));
  reset_dispatch_counts();
  Tensor out = moe_block(m.x, m.router, m.w, top_k, norm);
  EXPECT_EQ(experts_tier(), expect) << tier;
  return out;
}

TEST(MoeBlock, F32MatchesTheHandLoopOnEveryTier) {
  uint64_t seed = 1;
  for (bool norm : {true, false})
    for (int64_t top_k : {1, 2, 3}) {
      const Model m = make(5, 37, 24, 6, DType::f32, false, seed += 10);
      const std::vector<double> want = hand_loop(m, top_k, norm);
      EXPECT_TRUE(all_close(block_on("reference", m, top_k, norm, Tier::reference), want, 1e-5, 1e-6));
      EXPECT_TRUE(all_close(block_on("generic", m, top_k, norm, Tier::generic), want, 1e-4, 1e-5));
      for (cpu::Isa isa : cpu::host_isas()) {
        cpu::ScopedIsa level(isa);
        EXPECT_TRUE(all_close(block_on("dedicated", m, top_k, norm, Tier::dedicated), want, 1e-4, 1e-5))
            << cpu::isa_name(isa);
      }
    }
}

TEST(MoeBlock, Bf16TiersMatchTheReference) {
  const Model m = make(9, 70, 45, 8, DType::bf16, false, 50);
  for (int64_t top_k : {2, 8}) {
    const Tensor want = block_on("reference", m, top_k, true, Tier::reference);
    EXPECT_TRUE(all_close(block_on("generic", m, top_k, true, Tier::generic), want, 2e-2, 2e-3));
    for (cpu::Isa isa : cpu::host_isas()) {
      cpu::ScopedIsa level(isa);
      EXPECT_TRUE(all_close(block_on("dedicated", m, top_k, true, Tier::dedicated), want, 2e-2, 2e-3))
          << cpu::isa_name(isa);
    }
  }
}

// The engine's decode layout: f32 activations over bf16 expert and router weights (weight-only storage), on every
// tier against the hand loop over the stored bf16 values.
TEST(MoeBlock, Bf16WeightsUnderF32ActivationsMatchTheHandLoop) {
  Model m = make(4, 70, 45, 8, DType::bf16, false, 90);
  m.x = randn({4, 70}, DType::f32, 91);
  const std::vector<double> want = hand_loop(m, 2, true);
  EXPECT_TRUE(all_close(block_on("reference", m, 2, true, Tier::reference), want, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(block_on("generic", m, 2, true, Tier::generic), want, 1e-4, 1e-5));
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    EXPECT_TRUE(all_close(block_on("dedicated", m, 2, true, Tier::dedicated), want, 1e-4, 1e-5)) << cpu::isa_name(isa);
  }
}

// fp8 experts with 128x128 block scales (two blocks along each dim, the last partial): the reference against
// the hand loop, the generic and dedicated tiers (every ISA level) against the reference.
TEST(MoeBlock, Fp8ExpertsOnTheReferenceAndGenericTiers) {
  for (DType dtype : {DType::f32, DType::bf16}) {
    const Model m = make(3, 200, 150, 4, dtype, true, 70);
    const Tensor want = block_on("reference", m, 2, true, Tier::reference);
    if (dtype == DType::f32) {
      EXPECT_TRUE(all_close(want, hand_loop(m, 2, true), 1e-5, 1e-6));
    }
    const double rtol = dtype == DType::f32 ? 1e-4 : 2e-2, atol = dtype == DType::f32 ? 1e-5 : 2e-3;
    EXPECT_TRUE(all_close(block_on("generic", m, 2, true, Tier::generic), want, rtol, atol));
    for (cpu::Isa isa : cpu::host_isas()) {
      cpu::ScopedIsa level(isa);
      EXPECT_TRUE(all_close(block_on("dedicated", m, 2, true, Tier::dedicated), want, rtol, atol)) << cpu::isa_name(isa);
    }
  }
}

// Decode-sized fp8 experts stream through the e4m3 GEMV, which reads x (and the intermediate h) scaled by a power
// of two chosen from their largest magnitude: activations of 1e6 and 1e15 (h near 1e30) take the
// smaller exponents, and must come out as the reference's, to the same relative tolerance as small ones.
TEST(MoeExperts, Fp8DecodeExpertsWithLargeActivationsMatchTheReference) {
  for (DType dtype : {DType::f32, DType::bf16}) {
    for (double magnitude : {1.0, 1.0e6, 1.0e15}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " x of magnitude " + std::to_string(magnitude));
      Model m = make(1, 300, 200, 4, dtype, true, 130);
      std::vector<double> xv = m.x.to_vector();
      for (double& v : xv) v *= magnitude;
      m.x = Tensor::from_vector(xv, {1, 300}, dtype);
      const Tensor token = Tensor::from_vector({0, 0}, {2}, DType::i32);
      const Tensor weight = Tensor::from_vector({0.75, 0.25}, {2}, DType::f32);
      const Tensor offs = Tensor::from_vector({0, 1, 1, 2}, {4}, DType::i32);
      const auto on = [&](const char* tier) {
        ScopedPolicy scope(experts_on(tier));
        return moe_experts(m.x, m.w, token, weight, offs);
      };
      const Tensor want = on("reference");
      // The block is quadratic in x (silu(g) * u, g and u linear in x): the output scales as magnitude^2.
      const double scale = std::pow(magnitude, 2.0);
      for (cpu::Isa isa : cpu::host_isas()) {
        cpu::ScopedIsa level(isa);
        const Tensor got = on("dedicated");
        EXPECT_TRUE(all_close(got, want, dtype == DType::f32 ? 1e-4 : 2e-2, (dtype == DType::f32 ? 1e-5 : 2e-3) * scale))
            << cpu::isa_name(isa);
      }
    }
  }
}

void prefill_experts_across_tile_edges(int64_t hidden, int64_t inter, DType x_type);

// Prefill-sized experts run the packed GEMM's tiles: an expert of more rows than one tile (292 > 288), an
// intermediate size past one 256-column tile and (down's K) one 512-deep K block, a hidden size cut into
// several down column tiles, 128x128 fp8 scale blocks split across tiles; next to an empty expert and one of
// three rows (the decode loops: the GEMV rows over several 64-row work items, bf16 and fp8). Both
// phases' results also come out the same bytes on 1 and 2 threads. Sizes that are multiples of 32 take the
// AMX direct path at the amx level (x's and h's rows packed once per expert, bf16 x and f32 x over bf16
// weights); the others the packed tiles.
TEST(MoeExperts, PrefillExpertsAcrossTheGemmTileEdges) {
  struct Case {
    int64_t hidden, inter;
    DType x;
  };
  for (const Case c : {Case{200, 530, DType::bf16}, Case{256, 544, DType::bf16}, Case{256, 544, DType::f32}}) {
    SCOPED_TRACE(std::to_string(c.hidden) + " x " + std::to_string(c.inter) + " " + std::string(dtype_name(c.x)));
    prefill_experts_across_tile_edges(c.hidden, c.inter, c.x);
  }
}

void prefill_experts_across_tile_edges(int64_t hidden, int64_t inter, DType x_type) {
  const int64_t tokens = 292;
  // Rows sorted by expert: expert 0 takes every token, 1 is empty, 2 takes tokens 5..24, 3 takes 3 tokens.
  std::vector<double> token, weight;
  for (int64_t t = 0; t < tokens; ++t) token.push_back(static_cast<double>(t));
  for (int64_t t = 5; t < 25; ++t) token.push_back(static_cast<double>(t));
  for (double t : {7.0, 0.0, 291.0}) token.push_back(t);
  for (size_t r = 0; r < token.size(); ++r) weight.push_back(0.25 + 0.5 * static_cast<double>(r % 3));
  const int64_t rows = static_cast<int64_t>(token.size());
  const Tensor token_of_row = Tensor::from_vector(token, {rows}, DType::i32);
  const Tensor row_weight = Tensor::from_vector(weight, {rows}, DType::f32);
  const Tensor offs = Tensor::from_vector({292, 292, 312, 315}, {4}, DType::i32);
  for (bool fp8 : {false, true}) {
    SCOPED_TRACE(fp8 ? "fp8 experts" : "bf16 experts");
    Model m = make(tokens, hidden, inter, 4, DType::bf16, fp8, 120);
    m.x = m.x.to(x_type);   // f32 x over bf16 (or fp8) weights
    const auto on = [&](const char* tier) {
      ScopedPolicy scope(experts_on(tier));
      return moe_experts(m.x, m.w, token_of_row, row_weight, offs);
    };
    const Tensor want = on("reference");
    const int previous = num_threads();
    for (cpu::Isa isa : cpu::host_isas()) {
      cpu::ScopedIsa level(isa);
      set_num_threads(1);
      const Tensor one = on("dedicated");
      set_num_threads(2);
      const Tensor two = on("dedicated");
      EXPECT_TRUE(all_close(two, want, 2e-2, 2e-3)) << cpu::isa_name(isa);
      EXPECT_TRUE(testing::bit_equal(one, two)) << cpu::isa_name(isa);
    }
    set_num_threads(previous);
  }
}

// moe_experts directly: a token with no rows (zeros), a token twice in one expert, empty experts first and last.
TEST(MoeExperts, RoutingEdgeCasesOnEveryTierAndThreadCount) {
  const Model m = make(4, 33, 20, 5, DType::bf16, false, 90);
  const Tensor token = Tensor::from_vector({0, 0, 2, 1, 2, 0}, {6}, DType::i32);
  const Tensor weight = Tensor::from_vector({0.5, 0.25, 1.0, -0.75, 0.125, 2.0}, {6}, DType::f32);
  const Tensor offs = Tensor::from_vector({0, 2, 2, 6, 6}, {5}, DType::i32);
  const auto on = [&](const char* tier, Tier expect) {
    ScopedPolicy scope(experts_on(tier));
    reset_dispatch_counts();
    Tensor out = moe_experts(m.x, m.w, token, weight, offs);
    EXPECT_EQ(experts_tier(), expect) << tier;
    return out;
  };
  const Tensor want = on("reference", Tier::reference);
  for (int64_t h = 0; h < 33; ++h) EXPECT_EQ(want.to_vector()[static_cast<size_t>(3 * 33 + h)], 0.0);
  EXPECT_TRUE(all_close(on("generic", Tier::generic), want, 2e-2, 2e-3));
  const int previous = num_threads();
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    set_num_threads(1);
    const Tensor one = on("dedicated", Tier::dedicated);
    set_num_threads(2);
    const Tensor two = on("dedicated", Tier::dedicated);
    EXPECT_TRUE(all_close(two, want, 2e-2, 2e-3)) << cpu::isa_name(isa);
    EXPECT_TRUE(testing::bit_equal(one, two)) << cpu::isa_name(isa);
  }
  set_num_threads(previous);
  // No rows at all: zeros.
  const Tensor none = moe_experts(m.x, m.w, Tensor::empty({0}, DType::i32), Tensor::empty({0}, DType::f32),
                                  Tensor::zeros({5}, DType::i32));
  EXPECT_TRUE(all_close(none, Tensor::zeros({4, 33}, DType::bf16), 0, 0));
}

TEST(MoeBlock, BadArgumentsNameTheOpAndArgument) {
  const Model m = make(2, 16, 8, 4, DType::f32, false, 5);
  EXPECT_TRUE(throws_with<ShapeError>([&] { moe_block(m.x, m.router.narrow(0, 0, 3), m.w, 2, true); },
                                      {"moe_block", "router_weight"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { moe_block(m.x, m.router, m.w, 0, true); }, {"moe_block", "top_k"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { moe_block(m.x, m.router, m.w, 5, true); }, {"moe_block", "top_k"}));
  MoeExpertWeights bad = m.w;
  bad.up = m.w.up.to(DType::f64);   // bf16/f16 storage under f32 x is allowed; another float type is not
  EXPECT_TRUE(throws_with<DTypeError>([&] { moe_block(m.x, m.router, bad, 2, true); }, {"moe_block", "up", "float64"}));
  bad = m.w;
  bad.down = m.w.down.transpose(1, 2);
  EXPECT_TRUE(throws_with<ShapeError>([&] { moe_block(m.x, m.router, bad, 2, true); }, {"moe_block", "down"}));
  bad = m.w;
  bad.gate = m.w.gate.to(DType::f8_e4m3fn);
  EXPECT_TRUE(throws_with<ValueError>([&] { moe_block(m.x, m.router, bad, 2, true); }, {"moe_block", "gate_scale"}));
  bad.gate_scale = Tensor::full({4, 1, 2}, 1.0, DType::f32);
  EXPECT_TRUE(throws_with<ShapeError>([&] { moe_block(m.x, m.router, bad, 2, true); }, {"moe_block", "gate_scale"}));

  const Tensor token = Tensor::from_vector({0, 1}, {2}, DType::i32), weight = Tensor::full({2}, 1.0, DType::f32);
  EXPECT_TRUE(throws_with<ValueError>(
      [&] { moe_experts(m.x, m.w, token, weight, Tensor::from_vector({1, 1, 1, 1}, {4}, DType::i32)); },
      {"moe_experts", "offs"}));
  EXPECT_TRUE(throws_with<ValueError>(
      [&] { moe_experts(m.x, m.w, token, weight, Tensor::from_vector({2, 1, 2, 2}, {4}, DType::i32)); },
      {"moe_experts", "offs"}));
  EXPECT_TRUE(throws_with<ValueError>(
      [&] { moe_experts(m.x, m.w, Tensor::from_vector({0, 2}, {2}, DType::i32), weight,
                        Tensor::from_vector({0, 2, 2, 2}, {4}, DType::i32)); },
      {"moe_experts", "token_of_row"}));
  EXPECT_TRUE(throws_with<DTypeError>(
      [&] { moe_experts(m.x, m.w, token, weight.to(DType::bf16), Tensor::from_vector({0, 2, 2, 2}, {4}, DType::i32)); },
      {"moe_experts", "row_weight"}));
}

}  // namespace
}  // namespace fourfold
