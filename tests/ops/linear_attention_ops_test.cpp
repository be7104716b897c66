// The Gated DeltaNet ops on the reference tier: causal_conv1d, gated_delta_rule and rms_norm_gated by hand, their
// state carried across calls as across one call, the fused gates as the given ones, transformers' roundings of
// the gated norm, the zero-centred norms' f32 weight, and bad arguments refused by name.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "fourfold/errors.h"
#include "fourfold/ops.h"
#include "support/test_support.h"
#include "support/tier_fixture.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

Tensor f64(const std::vector<double>& v, const Shape& shape) { return Tensor::from_vector(v, shape, DType::f64); }
double silu(double x) { return x / (1 + std::exp(-x)); }

TEST(CausalConv1d, HandComputed) {
  testing::ReferenceOnly ref;
  // One channel, taps (w0, w1, w2) = (1, 2, 3): out_t = x_{t-2} + 2 x_{t-1} + 3 x_t, the past from the state.
  const Tensor x = f64({1, 2, 3}, {1, 1, 3}), w = f64({1, 2, 3}, {1, 3});
  Tensor state = f64({10, 20}, {1, 1, 2});
  const Tensor out = causal_conv1d(x, w, f64({0.5}, {1}), state);
  EXPECT_TRUE(all_close(out, {10 + 40 + 3 + 0.5, 20 + 2 + 6 + 0.5, 1 + 4 + 9 + 0.5}, 1e-15, 0));
  EXPECT_TRUE(all_close(state, {2, 3}, 0, 0));   // the last K-1 inputs
  EXPECT_TRUE(all_close(causal_conv1d(x, w, std::nullopt, std::nullopt, true),
                        {silu(3), silu(2 + 6), silu(1 + 4 + 9)}, 1e-15, 0));
}

TEST(CausalConv1d, StateCarriesAcrossCallsAsAcrossOne) {
  testing::ReferenceOnly ref;
  for (int64_t taps : {1, 2, 4}) {
    const Tensor x = randn({2, 5, 9}, DType::f64, 1), w = randn({5, taps}, DType::f64, 2);
    Tensor whole = Tensor::zeros({2, 5, taps - 1}, DType::f64), parts = whole.clone();
    const Tensor once = causal_conv1d(x, w, std::nullopt, whole, true);
    // 1 token, then 2 (fewer than the taps), then the rest.
    std::vector<Tensor> pieces;
    for (auto [start, length] : {std::pair<int64_t, int64_t>{0, 1}, {1, 2}, {3, 6}})
      pieces.push_back(causal_conv1d(x.narrow(2, start, length), w, std::nullopt, parts, true));
    std::vector<double> joined;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 5; ++c)
        for (const Tensor& p : pieces)
          for (int64_t t = 0; t < p.size(2); ++t) joined.push_back(p.select(0, b).select(0, c).select(0, t).item());
    EXPECT_TRUE(all_close(once, joined, 1e-14, 1e-14)) << taps << " taps";
    EXPECT_TRUE(all_close(parts, whole, 0, 0)) << taps << " taps";
  }
}

TEST(CausalConv1d, KeepsAChannelLastLayout) {
  const Tensor rows = randn({1, 7, 64}, DType::f32, 3);   // [B, T, C] in memory
  const Tensor out = causal_conv1d(rows.transpose(1, 2), randn({64, 4}, DType::f32, 4), std::nullopt, std::nullopt, true);
  EXPECT_EQ(out.shape(), (Shape{1, 64, 7}));
  EXPECT_EQ(out.stride(1), 1);
  EXPECT_EQ(out.stride(2), 64);
}

TEST(CausalConv1d, RefusesBadArguments) {
  const Tensor x = randn({1, 8, 3}, DType::f32, 1), w = randn({8, 4}, DType::f32, 2);
  EXPECT_THROW(causal_conv1d(x.view({8, 3}), w), ShapeError);
  EXPECT_THROW(causal_conv1d(x, randn({7, 4}, DType::f32, 3)), ShapeError);
  EXPECT_THROW(causal_conv1d(x, randn({8, 0}, DType::f32, 3)), ShapeError);
  EXPECT_THROW(causal_conv1d(x, w, randn({7}, DType::f32, 3)), ShapeError);
  EXPECT_THROW(causal_conv1d(x, w, std::nullopt, Tensor::zeros({1, 8, 4}, DType::f32)), ShapeError);
  EXPECT_THROW(causal_conv1d(x, w, std::nullopt, Tensor::zeros({1, 8, 3}, DType::bf16)), DTypeError);
  EXPECT_THROW(causal_conv1d(x, w, std::nullopt, x), ValueError);   // the state over the input
  try {
    causal_conv1d(x, w, std::nullopt, Tensor::zeros({1, 8, 2}, DType::f32));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("causal_conv1d"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("conv_state"), std::string::npos);
  }
}

TEST(GatedDeltaRule, HandComputed) {
  testing::ReferenceOnly ref;
  // One head of Dk = Dv = 1, no L2 norm, scale 1: S = e^g S; S += k beta (v - S k); o = S q.
  const Tensor q = f64({2, 3}, {1, 2, 1, 1}), k = f64({1, 2}, {1, 2, 1, 1}), v = f64({5, 7}, {1, 2, 1, 1});
  const Tensor g = f64({std::log(0.5), 0}, {1, 2, 1}), beta = f64({0.5, 0.25}, {1, 2, 1});
  Tensor state = f64({4}, {1, 1, 1, 1});
  GatedDeltaRuleOptions o;
  o.qk_l2norm = false;
  o.scale = 1.0;
  const Tensor out = gated_delta_rule(q, k, v, g, beta, state, o);
  const double s1 = 2 + 1 * 0.5 * (5 - 2 * 1);        // decayed 4 -> 2, then the update
  const double s2 = s1 + 2 * 0.25 * (7 - s1 * 2);
  EXPECT_TRUE(all_close(out, {s1 * 2, s2 * 3}, 1e-15, 0));
  EXPECT_TRUE(all_close(state, {s2}, 1e-15, 0));
}

// A prompt in one call, or in pieces with the state carried: the same outputs and final state; the fused gates
// give what the gates computed outside give.
TEST(GatedDeltaRule, StateCarriesAndFusedGatesAgree) {
  testing::ReferenceOnly ref;
  const int64_t t = 7, hk = 2, hv = 4, d = 8;
  const Tensor q = randn({1, t, hk, d}, DType::f64, 1), k = randn({1, t, hk, d}, DType::f64, 2);
  const Tensor v = randn({1, t, hv, d}, DType::f64, 3), a = randn({1, t, hv}, DType::f64, 4);
  const Tensor b = randn({1, t, hv}, DType::f64, 5);
  GatedDeltaRuleOptions fused;
  fused.a_log = randn({hv}, DType::f64, 6);
  fused.dt_bias = randn({hv}, DType::f64, 7);
  Tensor whole = randn({1, hv, d, d}, DType::f64, 8, 0.1), first = whole.clone(), outside = whole.clone();
  const Tensor once = gated_delta_rule(q, k, v, a, b, whole, fused);
  const auto part = [&](int64_t start, int64_t length) {
    return gated_delta_rule(q.narrow(1, start, length), k.narrow(1, start, length), v.narrow(1, start, length),
                            a.narrow(1, start, length), b.narrow(1, start, length), first, fused);
  };
  const Tensor p1 = part(0, 3), p2 = part(3, 4);
  EXPECT_TRUE(all_close(once.narrow(1, 0, 3), p1, 1e-13, 1e-13));
  EXPECT_TRUE(all_close(once.narrow(1, 3, 4), p2, 1e-13, 1e-13));
  EXPECT_TRUE(all_close(whole, first, 1e-13, 1e-13));
  // g = -exp(A_log) softplus(a + dt_bias), beta = sigmoid(b), computed here.
  std::vector<double> g = a.to_vector(), beta = b.to_vector();
  const std::vector<double> alog = fused.a_log->to_vector(), dt = fused.dt_bias->to_vector();
  for (size_t i = 0; i < g.size(); ++i) {
    g[i] = -std::exp(alog[i % hv]) * std::log1p(std::exp(g[i] + dt[i % hv]));
    beta[i] = 1 / (1 + std::exp(-beta[i]));
  }
  const Tensor given = gated_delta_rule(q, k, v, f64(g, {1, t, hv}), f64(beta, {1, t, hv}), outside);
  EXPECT_TRUE(all_close(given, once, 1e-13, 1e-13));
}

TEST(GatedDeltaRule, RefusesBadArguments) {
  const Tensor q = randn({1, 3, 2, 16}, DType::f32, 1), v = randn({1, 3, 4, 16}, DType::f32, 2);
  const Tensor g = randn({1, 3, 4}, DType::f32, 3);
  EXPECT_THROW(gated_delta_rule(q, q, randn({1, 3, 3, 16}, DType::f32, 4), g.narrow(2, 0, 3), g.narrow(2, 0, 3)),
               ShapeError);   // 3 value heads for 2 key heads
  EXPECT_THROW(gated_delta_rule(q, q, v, g.to(DType::bf16), g), DTypeError);   // a log decay in bf16
  EXPECT_THROW(gated_delta_rule(q, q, v, g, g, Tensor::zeros({1, 4, 16, 8}, DType::f32)), ShapeError);
  EXPECT_THROW(gated_delta_rule(q, q, v, g, g, Tensor::zeros({1, 4, 16, 16}, DType::bf16)), DTypeError);
  EXPECT_THROW(gated_delta_rule(q, randn({1, 4, 2, 16}, DType::f32, 5), v, g, g), ShapeError);
  GatedDeltaRuleOptions half;
  half.a_log = randn({4}, DType::f32, 6);
  EXPECT_THROW(gated_delta_rule(q, q, v, g, g, std::nullopt, half), ValueError);   // a_log without dt_bias
  GatedDeltaRuleOptions chunk;
  chunk.chunk_size = 0;
  EXPECT_THROW(gated_delta_rule(q, q, v, g, g, std::nullopt, chunk), ValueError);
  Tensor shared = Tensor::zeros({1, 4, 16, 16}, DType::f32);
  EXPECT_THROW(gated_delta_rule(q, q, shared.view({-1}).narrow(0, 0, 192).view({1, 3, 4, 16}), g, g, shared), ValueError);
}

TEST(RmsNormGated, RoundsWhereTransformersRounds) {
  testing::ReferenceOnly ref;
  const Tensor x = randn({3, 16}, DType::bf16, 1), gate = randn({3, 16}, DType::bf16, 2), w = randn({16}, DType::bf16, 3);
  // transformers: normed rounded to bf16, times the weight (a bf16 product), times silu(gate) in f32, rounded.
  const Tensor normed = rms_norm(x.to(DType::f64), {16}, std::nullopt, 1e-6).to(DType::bf16);
  const Tensor product = mul(normed.to(DType::f64), w.to(DType::f64)).to(DType::bf16);
  const Tensor want = mul(product.to(DType::f64), silu(gate.to(DType::f64))).to(DType::bf16);
  EXPECT_TRUE(testing::bit_equal(rms_norm_gated(x, gate, w, 1e-6), want));
  // In float64 nothing rounds: the plain formula.
  const Tensor x64 = x.to(DType::f64), g64 = gate.to(DType::f64);
  const Tensor plain = mul(mul(rms_norm(x64, {16}, std::nullopt, 1e-6), w.to(DType::f64)), silu(g64));
  EXPECT_TRUE(all_close(rms_norm_gated(x64, g64, w.to(DType::f64), 1e-6), plain, 1e-15, 1e-15));
}

TEST(RmsNormGated, RefusesBadArguments) {
  const Tensor x = randn({2, 8}, DType::f32, 1);
  EXPECT_THROW(rms_norm_gated(x, randn({2, 7}, DType::f32, 2)), ShapeError);
  EXPECT_THROW(rms_norm_gated(x, x.to(DType::bf16)), DTypeError);
  EXPECT_THROW(rms_norm_gated(x, x, randn({7}, DType::f32, 3)), ShapeError);
  EXPECT_THROW(rms_norm_gated(x.to(DType::bf16), x.to(DType::bf16), randn({8}, DType::f16, 3)), DTypeError);
}

// The zero-centred norms' 1 + w kept in f32 under bf16 activations: one rounding of the exact product.
TEST(RmsNorm, TakesAnF32WeightUnderBf16AndRoundsOnce) {
  const Tensor x = randn({4, 64}, DType::bf16, 1), w = randn({64}, DType::f32, 2, 0.1);
  const Tensor want = rms_norm(x.to(DType::f64), {64}, w.to(DType::f64), 1e-6).to(DType::bf16);
  for (const char* tier : {"reference", "generic", "dedicated"}) {
    const Tensor got = testing::under(tier, [&] { return rms_norm(x, {64}, w, 1e-6); });
    EXPECT_EQ(got.dtype(), DType::bf16) << tier;
    EXPECT_TRUE(all_close(got, want, 8e-3, 1e-6)) << tier;
  }
  EXPECT_THROW(rms_norm(x, {64}, randn({64}, DType::f16, 3)), DTypeError);
}

}  // namespace
}  // namespace fourfold
