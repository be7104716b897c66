// The Gated DeltaNet ops on the generic and dedicated tiers against the reference at every host ISA level, with
// one and two threads: vector bodies and tails, states carried in and out, the delta rule token by token and in
// chunks (several chunks and a partial one, value heads sharing key heads), the layouts the dedicated tier leaves
// to the generic one.
#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backends/tier_check.h"
#include "fourfold/ops.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using tier_check::expect_matches;
using tier_check::Outputs;

TEST(CausalConv1dTiers, MatchTheReference) {
  uint64_t seed = 1;
  for (DType dt : {DType::f32, DType::bf16, DType::f16})
    for (int64_t channels : {64, 37})
      for (int64_t tokens : {1, 2, 9})
        for (int64_t taps : {1, 4}) {
          const Tensor x = testing::randn({2, tokens, channels}, dt, seed++).transpose(1, 2);
          const Tensor w = testing::randn({channels, taps}, dt, seed++), bias = testing::randn({channels}, dt, seed++);
          const Tensor state = testing::randn({2, taps - 1, channels}, dt, seed++).transpose(1, 2);
          const auto fn = [=] {
            Tensor s = state.clone();
            // the state's own layout: channel-last, as the engine keeps it
            Tensor kept = Tensor::empty({2, taps - 1, channels}, dt).transpose(1, 2);
            kept.copy_from(s);
            const Tensor out = causal_conv1d(x, w, bias, kept, /*silu=*/true);
            return Outputs{out.contiguous(), kept.contiguous()};
          };
          const std::string what = fmt::format("C {} T {} K {} {}", channels, tokens, taps, dtype_name(dt));
          expect_matches("causal_conv1d", Tier::generic, fn, tier_check::tol(dt), what);
          expect_matches("causal_conv1d", Tier::dedicated, fn, tier_check::tol(dt), what);
        }
}

// transformers' conv state is [B, C, K], the last K inputs, of which a step reads the last K - 1: the view
// [..., 1:] (channel stride K) is updated in place, its first column left alone.
TEST(CausalConv1dTiers, AStateViewOfOtherStridesStaysDedicated) {
  for (DType dt : {DType::f32, DType::bf16}) {
    const Tensor x = testing::randn({2, 1, 40}, dt, 1).transpose(1, 2), w = testing::randn({40, 4}, dt, 2);
    const Tensor cache = testing::randn({2, 40, 4}, dt, 3);
    const auto fn = [&] {
      Tensor whole = cache.clone();
      Tensor view = whole.slice(2, 1, 4);
      const Tensor out = causal_conv1d(x, w, std::nullopt, view, /*silu=*/true);
      return Outputs{out.contiguous(), whole};
    };
    expect_matches("causal_conv1d", Tier::dedicated, fn, tier_check::tol(dt), std::string(dtype_name(dt)));
  }
}

TEST(CausalConv1dTiers, ChannelFirstAndWideKernelsLeaveTheDedicatedTier) {
  const Tensor x = testing::randn({1, 16, 5}, DType::f32, 1);   // [B, C, T] contiguous: not channel-last
  const auto fn = [&] { return Outputs{causal_conv1d(x, testing::randn({16, 3}, DType::f32, 2))}; };
  expect_matches("causal_conv1d", Tier::dedicated, fn, tier_check::tol(DType::f32), "channel-first", false);
  const Tensor rows = testing::randn({1, 5, 16}, DType::f32, 3).transpose(1, 2);
  const auto wide = [&] { return Outputs{causal_conv1d(rows, testing::randn({16, 9}, DType::f32, 4))}; };
  expect_matches("causal_conv1d", Tier::dedicated, wide, tier_check::tol(DType::f32), "9 taps", false);
}

struct DeltaCase {
  int64_t tokens, hk, hv, dk, dv;
  GatedDeltaMode mode;
  int64_t chunk;
};

Outputs delta_outputs(const DeltaCase& c, DType dt, uint64_t seed, bool fused) {
  const Tensor q = testing::randn({1, c.tokens, c.hk, c.dk}, dt, seed), k = testing::randn({1, c.tokens, c.hk, c.dk}, dt, seed + 1);
  const Tensor v = testing::randn({1, c.tokens, c.hv, c.dv}, dt, seed + 2);
  GatedDeltaRuleOptions o;
  o.mode = c.mode;
  o.chunk_size = c.chunk;
  Tensor g, beta;
  if (fused) {
    g = testing::randn({1, c.tokens, c.hv}, dt, seed + 3);
    beta = testing::randn({1, c.tokens, c.hv}, dt, seed + 4, 2.0);
    o.a_log = testing::randn({c.hv}, DType::f32, seed + 5, 1.0);
    o.dt_bias = testing::randn({c.hv}, DType::f32, seed + 6);
  } else {
    // A log decay, <= 0 as every model's (a growing state makes the chunked form's UT transform ill-conditioned).
    std::vector<double> decay = testing::randn({1, c.tokens, c.hv}, DType::f64, seed + 3, 0.3).to_vector();
    for (double& x : decay) x = -std::abs(x);
    g = Tensor::from_vector(decay, {1, c.tokens, c.hv}, DType::f32);
    beta = testing::randn({1, c.tokens, c.hv}, dt, seed + 4, 0.5);
  }
  Tensor state = testing::randn({1, c.hv, c.dk, c.dv}, DType::f32, seed + 7, 0.1);
  const Tensor out = gated_delta_rule(q, k, v, g, beta, state, o);
  return {out, state};
}

TEST(GatedDeltaRuleTiers, BothModesMatchTheReference) {
  const DeltaCase cases[] = {
      {1, 2, 4, 16, 32, GatedDeltaMode::recurrent, 64},    // a decode step, two value heads per key head
      {9, 1, 2, 32, 16, GatedDeltaMode::recurrent, 64},
      {130, 2, 2, 16, 64, GatedDeltaMode::chunked, 64},    // two whole chunks and a partial one
      {11, 2, 4, 24, 32, GatedDeltaMode::chunked, 4},      // Dk not a vector multiple, chunks of 4
      {5, 1, 1, 16, 80, GatedDeltaMode::chunked, 64},      // Dv past one column block
  };
  uint64_t seed = 100;
  for (const DeltaCase& c : cases)
    for (DType dt : {DType::f32, DType::bf16})
      for (bool fused : {true, false}) {
        const auto fn = [=] { return delta_outputs(c, dt, seed, fused); };
        const std::string what = fmt::format("T {} Hk {} Hv {} Dk {} Dv {} {} {} {}", c.tokens, c.hk, c.hv, c.dk, c.dv,
                                             c.mode == GatedDeltaMode::chunked ? "chunked" : "recurrent",
                                             dtype_name(dt), fused ? "fused gates" : "gates given");
        // f32 state and sums over up to 130 tokens: a relative 1e-4 against the float64 recurrence.
        const tier_check::Tol tol = dt == DType::f32 ? tier_check::Tol{1e-4, 1e-5} : tier_check::tol(dt);
        expect_matches("gated_delta_rule", Tier::generic, fn, tol, what);
        expect_matches("gated_delta_rule", Tier::dedicated, fn, tol, what);
        seed += 10;
      }
}

// The two orders of work give one answer: chunked against token by token on the dedicated tier.
TEST(GatedDeltaRuleTiers, ChunkedAgreesWithRecurrent) {
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    const DeltaCase chunked{200, 2, 4, 32, 32, GatedDeltaMode::chunked, 64};
    DeltaCase recurrent = chunked;
    recurrent.mode = GatedDeltaMode::recurrent;
    const Outputs a = testing::under("dedicated", [&] { return delta_outputs(chunked, DType::f32, 7, true); });
    const Outputs b = testing::under("dedicated", [&] { return delta_outputs(recurrent, DType::f32, 7, true); });
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(testing::all_close(a[i], b[i], 1e-4, 1e-5)) << cpu::isa_name(isa);
  }
}

TEST(GatedDeltaRuleTiers, UnsupportedLayoutsLeaveTheDedicatedTier) {
  const DeltaCase odd_dv{3, 1, 1, 16, 24, GatedDeltaMode::recurrent, 64};   // Dv not a multiple of 16
  const auto fn = [&] { return delta_outputs(odd_dv, DType::f32, 1, true); };
  expect_matches("gated_delta_rule", Tier::dedicated, fn, {1e-4, 1e-5}, "Dv 24", false);
}

TEST(RmsNormGatedTiers, MatchTheReference) {
  uint64_t seed = 1;
  for (DType dt : {DType::f32, DType::bf16, DType::f16})
    for (const Shape& shape : {Shape{32, 128}, Shape{5, 37}, Shape{1, 16}}) {
      const Tensor x = testing::randn(shape, dt, seed++), gate = testing::randn(shape, dt, seed++, 3.0);
      for (DType wt : {dt, DType::f32}) {
        const Tensor w = testing::randn({shape[1]}, wt, seed++);
        const auto fn = [=] { return Outputs{rms_norm_gated(x, gate, w, 1e-6)}; };
        const std::string what = shape_string(shape) + " " + std::string(dtype_name(dt)) + " weight " + std::string(dtype_name(wt));
        expect_matches("rms_norm_gated", Tier::generic, fn, tier_check::tol(dt), what);
        expect_matches("rms_norm_gated", Tier::dedicated, fn, tier_check::tol(dt), what);
      }
    }
}

}  // namespace
}  // namespace fourfold
