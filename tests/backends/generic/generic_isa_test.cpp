// The generic tier's per-ISA loops (backends/generic/kernels/loops.cpp) at every host level, through ops that
// use each of them: softmax (max, subtract, exp, sum, divide, log), linear on both sides of the dot-product /
// packed-GEMM split, activations (neg, reciprocal, square, cube, erf, tanh), binary broadcasts and the f32 <->
// bf16 / f16 row conversions, matmul / bmm and attention through both GEMM layouts (B as [N, K] and as [K, N]);
// odd widths for the vector tails, NaN / inf, one and two threads.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/generic/primitives.h"
#include "backends/tier_check.h"

namespace fourfold {
namespace {

using tier_check::expect_matches;
using tier_check::Outputs;
using tier_check::tol;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Dot products of length ~75 cancel: a relative bound alone fails near zero.
tier_check::Tol product_tol(DType t) {
  const testing::Tolerance p = testing::product_tolerance(t);
  return {std::max(p.rtol, 1e-5), p.atol + 2e-5};
}

TEST(GenericIsa, SoftmaxAndLogSoftmaxWithTailsAndSpecials) {
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (int64_t cols : {1, 15, 17, 100, 1000}) {
      const Tensor x = tier_check::with_specials({3, cols}, t, 7 + cols, cols > 20 ? std::vector<double>{kInf} : std::vector<double>{});
      const std::string what = std::string(dtype_name(t)) + " cols " + std::to_string(cols);
      expect_matches("softmax", Tier::generic, [&] { return Outputs{softmax(x, -1)}; }, tol(t), what);
      expect_matches("log_softmax", Tier::generic, [&] { return Outputs{log_softmax(x, -1)}; }, tol(t), what);
    }
  // An all -inf row is NaN (0/0) and a NaN row stays NaN on every level.
  const Tensor special = Tensor::from_vector({-kInf, -kInf, -kInf, 1.0, std::nan(""), 2.0}, {2, 3}, DType::f32);
  expect_matches("softmax", Tier::generic, [&] { return Outputs{softmax(special, -1)}; }, tol(DType::f32), "specials");
}

TEST(GenericIsa, LinearAcrossTheDotAndPackedGemmSplit) {
  uint64_t seed = 100;
  for (DType t : {DType::f32, DType::bf16})
    for (int64_t m : {int64_t{1}, int64_t{5}, generic::kGemmDotRows, generic::kGemmDotRows + 1, int64_t{33}}) {
      const Tensor x = testing::randn({m, 75}, t, seed++), w = testing::randn({37, 75}, t, seed++);
      const Tensor b = testing::randn({37}, t, seed++);
      const std::string what = std::string(dtype_name(t)) + " m " + std::to_string(m);
      expect_matches("linear", Tier::generic, [&] { return Outputs{linear(x, w, b)}; }, product_tol(t), what);
      expect_matches("linear", Tier::generic, [&] { return Outputs{linear(testing::non_contiguous(x), w)}; }, product_tol(t),
                     what + " strided x");
    }
  // k == 0: the bias alone.
  const Tensor x0 = Tensor::empty({3, 0}, DType::f32), w0 = Tensor::empty({4, 0}, DType::f32);
  const Tensor b0 = testing::randn({4}, DType::f32, 9);
  expect_matches("linear", Tier::generic, [&] { return Outputs{linear(x0, w0, b0)}; }, tol(DType::f32), "k 0");
}

TEST(GenericIsa, MatmulAndBmmAcrossTheSmallAndPackedGemmSplit) {
  uint64_t seed = 200;
  for (DType t : {DType::f32, DType::bf16})
    for (int64_t m : {int64_t{1}, int64_t{3}, generic::kGemmDotRows, generic::kGemmDotRows + 1, int64_t{40}})
      for (int64_t n : {int64_t{7}, int64_t{70}, int64_t{131}}) {
        const Tensor a = testing::randn({2, m, 29}, t, seed++), b = testing::randn({2, 29, n}, t, seed++);
        const std::string what = std::string(dtype_name(t)) + " m " + std::to_string(m) + " n " + std::to_string(n);
        expect_matches("matmul", Tier::generic, [&] { return Outputs{bmm(a, b)}; }, product_tol(t), what);
        expect_matches("matmul", Tier::generic, [&] { return Outputs{matmul(a.select(0, 1), testing::non_contiguous(b.select(0, 0)))}; },
                       product_tol(t), what + " strided b");
      }
}

// Decode (one query: the small-M GEMMs) and prefill (the packed GEMM), GQA, causal.
TEST(GenericIsa, AttentionDecodeAndPrefill) {
  uint64_t seed = 300;
  for (DType t : {DType::f32, DType::bf16})
    for (int64_t l : {int64_t{1}, int64_t{12}}) {
      const Tensor q = testing::randn({1, 4, l, 24}, t, seed++), k = testing::randn({1, 2, 37, 24}, t, seed++);
      const Tensor v = testing::randn({1, 2, 37, 20}, t, seed++);
      const std::string what = std::string(dtype_name(t)) + " l " + std::to_string(l);
      expect_matches("scaled_dot_product_attention", Tier::generic, [&] {
        return Outputs{scaled_dot_product_attention(q, k, v, std::nullopt, l > 1, std::nullopt, true)};
      }, product_tol(t), what);
    }
}

// The generic tier has the pad backward too (a crop by fill-then-copy), bit-exact.
TEST(GenericIsa, PadBackwardIsABitExactCrop) {
  for (DType t : {DType::f32, DType::bf16, DType::f16, DType::i64}) {
    const Tensor g = testing::random_bits({3, 7, 9}, t, 5);
    expect_matches("constant_pad_nd_backward", Tier::generic, [&] { return Outputs{constant_pad_nd_backward(g, {1, 2, 0, 3})}; },
                   {0.0, 0.0}, std::string(dtype_name(t)));
    expect_matches("constant_pad_nd_backward", Tier::generic,
                   [&] { return Outputs{constant_pad_nd_backward(testing::non_contiguous(g), {2, 0})}; }, {0.0, 0.0},
                   std::string(dtype_name(t)) + " strided");
  }
}

TEST(GenericIsa, ActivationsAndBinaryBroadcasts) {
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    const Tensor x = tier_check::with_specials({5, 37}, t, 3, {kInf, -kInf, std::nan(""), 0.0});
    const std::string what(dtype_name(t));
    expect_matches("gelu", Tier::generic, [&] { return Outputs{gelu(x)}; }, tol(t), what + " erf");
    expect_matches("gelu", Tier::generic, [&] { return Outputs{gelu(x, GeluApproximate::tanh)}; }, tol(t), what + " tanh");
    expect_matches("silu", Tier::generic, [&] { return Outputs{silu(x)}; }, tol(t), what);
    const Tensor row = testing::randn({37}, t, 4), col = testing::randn({5, 1}, t, 5), full = testing::randn({5, 37}, t, 6);
    expect_matches("add", Tier::generic, [&] { return Outputs{add(x, full, 0.5)}; }, tol(t), what + " full");
    expect_matches("mul", Tier::generic, [&] { return Outputs{mul(x, row)}; }, tol(t), what + " per column");
    expect_matches("mul", Tier::generic, [&] { return Outputs{mul(x, col)}; }, tol(t), what + " per row");
  }
}

// The generic exp is the dedicated tier's vectorized exp at each level, bit for bit (so neither tier's exp is
// an advantage the other lacks).
TEST(GenericIsa, ExpIsTheDedicatedVectorExpAtEveryLevel) {
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -100.0f + 0.1937f * static_cast<float>(i);
  x[3] = std::nanf(""), x[5] = INFINITY, x[8] = -INFINITY;
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    std::vector<float> got(x.size()), want(x.size());
    generic::unary(generic::Unary::exp, x.data(), got.data(), static_cast<int64_t>(x.size()));
    const int64_t n = static_cast<int64_t>(x.size());
    switch (isa) {
      case cpu::Isa::scalar: cpu::scalar::exp_f32(x.data(), want.data(), n); break;
      case cpu::Isa::avx2: cpu::avx2::exp_f32(x.data(), want.data(), n); break;
      case cpu::Isa::avx512: cpu::avx512::exp_f32(x.data(), want.data(), n); break;
      case cpu::Isa::avx512bf16: cpu::avx512bf16::exp_f32(x.data(), want.data(), n); break;
      case cpu::Isa::amx: cpu::amx::exp_f32(x.data(), want.data(), n); break;
    }
    EXPECT_EQ(std::memcmp(got.data(), want.data(), x.size() * sizeof(float)), 0) << cpu::isa_name(isa);
  }
}

}  // namespace
}  // namespace fourfold
