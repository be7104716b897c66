// The fused decoder helpers (rms_norm / add_rms_norm, rotary_embedding / rotary_embedding_, silu_mul) and
// softmax / log_softmax backward on the dedicated tier (every host ISA level) and the generic tier, against the
// reference: dtypes, odd widths (vector tails), padded and permuted layouts, in-place rotary, NaN / inf, one vs
// two threads, and the layouts the dedicated tier leaves to the others.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "backends/tier_check.h"

namespace fourfold {
namespace {

using tier_check::expect_matches;
using tier_check::Outputs;
using tier_check::padded_rows;
using tier_check::tol;
using tier_check::with_specials;
using testing::randn;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr DType kTypes[] = {DType::f32, DType::bf16, DType::f16};
constexpr Tier kTiers[] = {Tier::dedicated, Tier::generic};

TEST(FusedRmsNorm, MatchesTheReference) {
  uint64_t seed = 1;
  for (Tier tier : kTiers)
    for (DType t : kTypes)
      for (int64_t d : {1, 7, 16, 67, 1000}) {
        const Tensor x = randn({5, d}, t, seed++), r = randn({5, d}, t, seed++);
        const Tensor w = testing::rand_uniform({d}, t, seed++, 0.5, 1.5);
        const std::string what = fmt::format("{} d={}", dtype_name(t), d);
        expect_matches("rms_norm", tier, [&] { return Outputs{rms_norm(x, {d}, w, 1e-6)}; }, tol(t), what);
        expect_matches("rms_norm", tier, [&] { return Outputs{rms_norm(x, {d})}; }, tol(t), what + " no weight");
        expect_matches("rms_norm", tier, [&] {
          auto [y, h] = add_rms_norm(x, r, {d}, w, 1e-6);
          return Outputs{y, h};
        }, tol(t), what + " add_rms_norm");
        // Padded rows (unit inner stride) stay on the dedicated tier.
        expect_matches("rms_norm", tier, [&] {
          auto [y, h] = add_rms_norm(padded_rows(x), padded_rows(r), {d}, w);
          return Outputs{y, h};
        }, tol(t), what + " padded");
      }
}

TEST(FusedRmsNorm, ThreeDimsAndManyRows) {
  for (Tier tier : kTiers) {
    const Tensor x = randn({3, 50, 96}, DType::bf16, 7), r = randn({3, 50, 96}, DType::bf16, 8);
    const Tensor w = randn({96}, DType::bf16, 9);
    expect_matches("rms_norm", tier, [&] {
      auto [y, h] = add_rms_norm(x, r, {96}, w);
      return Outputs{y, h};
    }, tol(DType::bf16), "3-D");
  }
}

// An inf makes the row's rms inf: its own element NaN (inf * 0), the rest 0; a NaN makes the row NaN.
TEST(FusedRmsNorm, InfAndNaN) {
  for (Tier tier : kTiers)
    for (DType t : kTypes) {
      const Tensor x = with_specials({4, 33}, t, 11, {kInf, kNaN, -kInf});
      const Tensor r = randn({4, 33}, t, 12);
      expect_matches("rms_norm", tier, [&] { return Outputs{rms_norm(x, {33})}; }, tol(t), "specials");
      expect_matches("rms_norm", tier, [&] {
        auto [y, h] = add_rms_norm(x, r, {33});
        return Outputs{y, h};
      }, tol(t), "specials add");
    }
}

TEST(FusedRmsNorm, PermutedRowsFallBack) {
  const Tensor x = testing::non_contiguous(randn({6, 40}, DType::f32, 13));
  expect_matches("rms_norm", Tier::dedicated, [&] { return Outputs{rms_norm(x, {40})}; }, tol(DType::f32),
                 "permuted", false);
}

// cos / sin of a [L, R/2] table broadcast over batch and heads, like a decoder's.
struct RotaryCase {
  Tensor x, cos, sin;
};
RotaryCase rotary_case(const Shape& shape, int64_t half, DType t, uint64_t seed) {
  const int64_t l = shape[shape.size() - 2];
  const Tensor angle = testing::rand_uniform({l, half}, DType::f64, seed, -3.0, 3.0);
  std::vector<double> c, s;
  for (double a : angle.to_vector()) c.push_back(std::cos(a)), s.push_back(std::sin(a));
  return {randn(shape, t, seed + 1), Tensor::from_vector(c, {l, half}, t), Tensor::from_vector(s, {l, half}, t)};
}

TEST(FusedRotary, BothStylesPartialRotationAndTails) {
  uint64_t seed = 20;
  for (Tier tier : kTiers)
    for (DType t : kTypes)
      for (RotaryStyle style : {RotaryStyle::half_split, RotaryStyle::interleaved})
        for (auto [d, half] : {std::pair<int64_t, int64_t>{128, 64}, {64, 16}, {70, 35}, {6, 1}, {90, 33}, {40, 0}}) {
          const RotaryCase c = rotary_case({2, 3, 5, d}, half, t, seed++);
          const std::string what = fmt::format("{} d={} half={} style={}", dtype_name(t), d, half,
                                               style == RotaryStyle::interleaved ? "interleaved" : "half_split");
          expect_matches("rotary_embedding", tier, [&] { return Outputs{rotary_embedding(c.x, c.cos, c.sin, style)}; },
                         tol(t), what);
          // In place, on a fresh copy each time.
          expect_matches("rotary_embedding", tier, [&] {
            Tensor y = c.x.clone();
            rotary_embedding_(y, c.cos, c.sin, style);
            return Outputs{y};
          }, tol(t), what + " in place");
        }
}

// q laid out [B, L, H, D] in memory and viewed as [B, H, L, D] (the usual transpose), rotated out of place and
// in place through the view; cos / sin given as [B, 1, L, half] expanded.
TEST(FusedRotary, TransposedViewsInPlace) {
  for (Tier tier : kTiers)
    for (DType t : kTypes)
      for (RotaryStyle style : {RotaryStyle::half_split, RotaryStyle::interleaved}) {
        const RotaryCase c = rotary_case({4, 48}, 24, t, 40);   // only the [L = 4, 24] tables are used
        const Tensor cos4 = c.cos.unsqueeze(0).unsqueeze(0), sin4 = c.sin.unsqueeze(0).unsqueeze(0);   // [1,1,4,24]
        const Tensor base = randn({2, 4, 7, 48}, t, 41);   // [B, L, H, D]
        expect_matches("rotary_embedding", tier, [&] {
          return Outputs{rotary_embedding(base.transpose(1, 2), cos4, sin4, style)};
        }, tol(t), "transposed");
        expect_matches("rotary_embedding", tier, [&] {
          Tensor mem = base.clone();
          Tensor q = mem.transpose(1, 2);
          rotary_embedding_(q, cos4, sin4, style);
          return Outputs{mem};
        }, tol(t), "transposed in place");
      }
}

TEST(FusedRotary, InfAndNaN) {
  for (Tier tier : kTiers)
    for (RotaryStyle style : {RotaryStyle::half_split, RotaryStyle::interleaved}) {
      RotaryCase c = rotary_case({3, 40}, 17, DType::f32, 50);
      c.x = with_specials({3, 40}, DType::f32, 51, {kInf, kNaN, -kInf, kInf});
      expect_matches("rotary_embedding", tier, [&] { return Outputs{rotary_embedding(c.x, c.cos, c.sin, style)}; },
                     tol(DType::f32), "specials");
    }
}

TEST(FusedRotary, StridedLastDimFallsBack) {
  const RotaryCase c = rotary_case({4, 32}, 8, DType::f32, 60);
  const Tensor x = testing::non_contiguous(c.x);
  expect_matches("rotary_embedding", Tier::dedicated, [&] { return Outputs{rotary_embedding(x, c.cos, c.sin)}; },
                 tol(DType::f32), "strided", false);
}

// silu(-inf) is NaN, silu(inf) * u is inf * u; large negative gates give (-)0; NaN propagates.
TEST(FusedSiluMul, InfNaNAndExtremes) {
  for (Tier tier : kTiers)
    for (DType t : kTypes) {
      const Tensor g = with_specials({5, 37}, t, 80, {kInf, -kInf, kNaN, -100.0, 100.0, -20.0, 30.0}, 3.0);
      const Tensor u = with_specials({5, 37}, t, 81, {2.0, 3.0, 1.0, 1.0, -1.0, kInf, 0.5});
      expect_matches("silu_mul", tier, [&] { return Outputs{silu_mul(g, u)}; }, tol(t), "specials");
    }
}

TEST(FusedSiluMul, NonContiguousFallsBack) {
  const Tensor g = testing::non_contiguous(randn({8, 9}, DType::f32, 90)), u = randn({8, 9}, DType::f32, 91);
  expect_matches("silu_mul", Tier::dedicated, [&] { return Outputs{silu_mul(g, u)}; }, tol(DType::f32), "strided",
                 false);
}

// ---- softmax / log_softmax backward, from a real forward output

TEST(SoftmaxBackward, MatchesTheReference) {
  uint64_t seed = 100;
  for (Tier tier : kTiers)
    for (DType t : kTypes)
      for (int64_t n : {1, 15, 17, 1000, 70000})
        for (bool log : {false, true}) {
          const int64_t rows = n > 10000 ? 1 : 3;
          const Tensor x = randn({rows, n}, t, seed++, 3.0), g = randn({rows, n}, t, seed++);
          const Tensor y = log ? log_softmax(x, 1) : softmax(x, 1);
          const std::string what = fmt::format("{} n={} log={}", dtype_name(t), n, log);
          // A split row sums its chunks in another order with two threads: equal within the tolerance only.
          // g - exp(y) sum(g) cancels: the generic tier's f32 sum of 70,000 terms costs ~1e-5 absolute.
          tier_check::Tol tl = tol(t);
          if (n > 10000) tl.atol = std::max(tl.atol, 2e-5);
          expect_matches(log ? "log_softmax_backward" : "softmax_backward", tier, [&] {
            return Outputs{log ? log_softmax_backward(g, y, 1) : softmax_backward(g, y, 1)};
          }, tl, what, true, n < 10000);
        }
}

TEST(SoftmaxBackward, InfNaNAndOtherDims) {
  for (Tier tier : kTiers) {
    const Tensor y = softmax(with_specials({3, 21}, DType::f32, 110, {-kInf, kNaN}), 1);
    const Tensor g = with_specials({3, 21}, DType::f32, 111, {kInf});
    expect_matches("softmax_backward", tier, [&] { return Outputs{softmax_backward(g, y, 1)}; }, tol(DType::f32),
                   "specials");
    expect_matches("log_softmax_backward", tier, [&] { return Outputs{log_softmax_backward(g, log_softmax(y, 1), 1)}; },
                   tol(DType::f32), "specials log");
    // Along dim 0 neither tier covers; the reference does.
    expect_matches("softmax_backward", tier, [&] { return Outputs{softmax_backward(g, y, 0)}; }, tol(DType::f32),
                   "dim 0", false);
  }
}

}  // namespace
}  // namespace fourfold
