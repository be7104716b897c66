// The dedicated decode GEMV (linear and scaled_linear with M <= 8) at every ISA level the host has, against the
// reference: every weight x activation dtype, M 1..8, odd N and K (vector tails), bias or not, non-contiguous
// x, fp8 recipes and special values (subnormals, +-max, NaN, inf), 1 vs 2 threads bit-identical, what it declines.
#include <cmath>
#include <cstring>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/isa.h"
#include "fourfold/parallel.h"
#include "support/test_support.h"
#include "backends/dedicated_check.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

// f32 accumulation over K <= 300 terms of size ~1: up to ~3e-5 absolute (sum of |terms| ~ 200 times 2^-24 per add); bf16 / f16 outputs round once.
testing::Tolerance tolerance(DType out) {
  return out == DType::f32 ? testing::Tolerance{1e-5, 5e-5} : testing::product_tolerance(out);
}

::testing::AssertionResult dedicated_matches(const std::function<Tensor()>& call, bool dedicated = true) {
  return testing::matches_at_every_level(call, dedicated, &tolerance);
}

struct Pair {
  DType x, w;
};
constexpr Pair kPairs[] = {{DType::f32, DType::f32},  {DType::bf16, DType::bf16}, {DType::f16, DType::f16},
                           {DType::f32, DType::bf16}, {DType::f32, DType::f16}};

TEST(Gemv, EveryDtypePairMAndTailMatchesTheReference) {
  uint64_t seed = 1;
  for (const Pair& p : kPairs)
    for (int64_t m = 1; m <= 8; ++m)
      for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {13, 37}, {35, 130}}) {
        const Tensor x = randn({m, k}, p.x, seed++), w = randn({n, k}, p.w, seed++), b = randn({n}, p.x, seed++);
        EXPECT_TRUE(dedicated_matches([&] { return linear(x, w); })) << m << " " << n << " " << k;
        EXPECT_TRUE(dedicated_matches([&] { return linear(x, w, b); })) << m << " " << n << " " << k;
      }
}

TEST(Gemv, NonContiguousInputs) {
  {
    for (const Pair& p : kPairs) {
      const Tensor x = testing::non_contiguous(randn({5, 67}, p.x, 10));
      // Rows of a wider buffer: k contiguous, row stride 70, covered.
      const Tensor w = randn({19, 70}, p.w, 11).narrow(1, 2, 67);
      const Tensor b = randn({38}, p.x, 12).slice(0, 0, 38, 2);
      EXPECT_TRUE(dedicated_matches([&] { return linear(x, w, b); }));
      // A transposed weight (k strided) is declined.
      const Tensor wt = testing::non_contiguous(randn({19, 67}, p.w, 13));
      EXPECT_TRUE(dedicated_matches([&] { return linear(x, wt, b); }, wt.stride(1) == 1));
    }
  }
}

TEST(Gemv, DeclinesMoreThanEightRows) {
  const Tensor x = randn({9, 40}, DType::f32, 20), w = randn({7, 40}, DType::bf16, 21);
  Tensor out = Tensor::empty({9, 7}, DType::f32);
  EXPECT_FALSE(cpu::linear_decode_covers(LinearArgs{x, w, nullptr, out}));
  // The dedicated tier still runs it: the prefill GEMM takes more than eight rows.
  EXPECT_TRUE(dedicated_matches([&] { return linear(x, w); }, true));
}

TEST(Gemv, EmptyKGivesTheBias) {
  {
    const Tensor x = Tensor::empty({3, 0}, DType::f32), w = Tensor::empty({5, 0}, DType::bf16);
    const Tensor b = randn({5}, DType::f32, 22);
    EXPECT_TRUE(dedicated_matches([&] { return linear(x, w, b); }));
    EXPECT_TRUE(dedicated_matches([&] { return linear(x, w); }));
  }
}

TEST(Gemv, NaNAndInfPropagate) {
  {
    Tensor x = randn({2, 33}, DType::f32, 23);
    x.data_as<float>()[5] = NAN;
    x.data_as<float>()[33 + 32] = INFINITY;   // the tail lane of row 1
    const Tensor w = randn({9, 33}, DType::bf16, 24);
    EXPECT_TRUE(dedicated_matches([&] { return linear(x, w); }));
  }
}

// Each output is computed by one thread in a fixed order: the thread count does not change a bit.
TEST(Gemv, OneAndTwoThreadsAreBitIdentical) {
  const int threads = num_threads();
  for (const Pair& p : kPairs) {
    const Tensor x8 = randn({8, 515}, p.x, 30), w = randn({1001, 515}, p.w, 31), b = randn({1001}, p.x, 32);
    for (cpu::Isa isa : cpu::host_isas())
      for (int64_t m : {1, 3, 8}) {
        cpu::ScopedIsa level(isa);
        const Tensor x = x8.narrow(0, 0, m);
        ScopedPolicy forced(Policy::parse("dedicated"));
        set_num_threads(1);
        const Tensor one = linear(x, w, b);
        set_num_threads(2);
        const Tensor two = linear(x, w, b);
        EXPECT_TRUE(testing::bit_equal(one, two)) << cpu::isa_name(isa) << " " << m;
      }
  }
  set_num_threads(threads);
}

// ---------------------------------------------------------------- scaled_linear (fp8 weights)

struct Scales {
  Tensor tensorwise, rowwise, block;
};
Scales scales_for(int64_t n, int64_t k, uint64_t seed) {
  return {Tensor::from_vector({0.75}, {}, DType::f32), testing::rand_uniform({n, 1}, DType::f32, seed, 0.25, 2.0),
          testing::rand_uniform({(n + 127) / 128, (k + 127) / 128}, DType::f32, seed + 1, 0.25, 2.0)};
}

// N = 130 and K = 270 leave partial 128x128 blocks and vector tails on both edges.
TEST(GemvFp8, EveryRecipeMatchesTheReference) {
  const int64_t n = 130, k = 270;
  {
    uint64_t seed = 40;
    for (DType wdt : {DType::f8_e4m3fn, DType::f8_e5m2})
      for (DType xdt : {DType::f32, DType::bf16})
        for (int64_t m : {1, 2, 5, 8}) {
          const Tensor x = randn({m, k}, xdt, seed++), w = randn({n, k}, wdt, seed++);
          const Tensor b = randn({n}, xdt, seed++);
          const Scales s = scales_for(n, k, seed++);
          for (const Tensor* scale : {&s.tensorwise, &s.rowwise, &s.block}) {
            EXPECT_TRUE(dedicated_matches([&] { return scaled_linear(x, w, *scale, b); }))
                << dtype_name(wdt) << " " << dtype_name(xdt) << " m " << m << " scale " << scale->describe();
            EXPECT_TRUE(dedicated_matches([&] { return scaled_linear(testing::non_contiguous(x), w, *scale); }));
          }
        }
  }
}

// Every fp8 code through a one-hot x: out[n] = fp8(code n) * scale exactly, so subnormals must survive the
// in-register conversion, +-max must not overflow, NaN must stay NaN and e5m2's inf stay inf.
TEST(GemvFp8, EveryCodeIncludingSubnormalsMaxAndNaN) {
  {
    for (DType wdt : {DType::f8_e4m3fn, DType::f8_e5m2})
      for (int64_t k : {16, 19, 83, 200, 256}) {
        // The tail lane when k = 19 or 83, a lane of the 64-code line loop when k = 200, and one in a line's
        // second 32 codes when k = 256 (AVX2 checks a line for NaN codes one 32-byte register at a time).
        const int64_t col = k == 200 ? 70 : k == 256 ? 109 : k - 1;
        Tensor w = Tensor::zeros({256, k}, wdt);
        for (int64_t c = 0; c < 256; ++c) static_cast<uint8_t*>(w.data())[c * k + col] = static_cast<uint8_t>(c);
        Tensor x = Tensor::zeros({1, k}, DType::f32);
        x.data_as<float>()[col] = 1.0f;
        for (double scale : {1.0, 0.5}) {
          const Tensor s = Tensor::from_vector({scale}, {}, DType::f32);
          EXPECT_TRUE(testing::matches_at_every_level([&] { return scaled_linear(x, w, s); }, true, &testing::exact))
              << dtype_name(wdt) << " k " << k;
          // The reference's own value of the smallest subnormal (code 1), which the kernels matched: not zero.
          testing::ReferenceOnly ref;
          EXPECT_EQ(scaled_linear(x, w, s).data_as<float>()[1],
                    static_cast<float>(std::ldexp(scale, wdt == DType::f8_e4m3fn ? -9 : -16)));
        }
      }
  }
}

// K around the main loop's 64-byte lines (16 f32, 32 bf16 / f16, 64 fp8 weights per line): whole lines only,
// a line plus one vector, plus a vector tail, and 128-blocks that end mid-line; N not a multiple of the row
// group (the prefetch of the group after the last).
TEST(Gemv, KAroundTheLineLoop) {
  uint64_t seed = 80;
  for (const Pair& p : kPairs)
    for (int64_t k : {15, 16, 17, 63, 64, 65, 97, 129, 191, 577})
      for (int64_t m : {1, 3}) {
        const Tensor x = randn({m, k}, p.x, seed++), w = randn({7, k}, p.w, seed++);
        EXPECT_TRUE(dedicated_matches([&] { return linear(x, w); })) << dtype_name(p.w) << " k " << k << " m " << m;
      }
  for (DType wdt : {DType::f8_e4m3fn, DType::f8_e5m2})
    for (int64_t k : {63, 64, 65, 129, 191, 577, 700})
      for (int64_t m : {1, 2}) {   // m = 1: short fp8 rows in groups of 4, and the ninth alone
        const Tensor x = randn({m, k}, DType::bf16, seed++), w = randn({9, k}, wdt, seed++, 8.0);
        const Scales s = scales_for(9, k, seed++);
        for (const Tensor* scale : {&s.tensorwise, &s.block})
          EXPECT_TRUE(dedicated_matches([&] { return scaled_linear(x, w, *scale); })) << dtype_name(wdt) << " k " << k << " m " << m;
      }
}

// e4m3 products are formed against activations scaled by a power of two chosen from their largest finite
// magnitude (kernels/gemv.cpp, run_gemv): large activations (up to near f32's max) take a smaller power and
// must neither overflow nor lose the small terms; inf and NaN activations propagate; all-zero ones give zero.
TEST(GemvFp8, LargeTinyAndNonFiniteActivations) {
  const int64_t n = 37, k = 150;
  uint64_t seed = 90;
  for (DType wdt : {DType::f8_e4m3fn, DType::f8_e5m2})
    for (double big : {0.0, 1.0e4, 3.0e4, 1.0e20, 1.0e36, 3.0e38}) {
      Tensor x = randn({2, k}, DType::f32, seed++);
      if (big == 0.0) {
        std::memset(x.data(), 0, static_cast<size_t>(2 * k * 4));
      } else {
        x.data_as<float>()[3] = static_cast<float>(big);
        x.data_as<float>()[k + 100] = static_cast<float>(-big / 3);
      }
      x.data_as<float>()[k + 7] = 1e-40f;   // a subnormal activation
      // Weights and scales small enough that the exact result is finite even for the largest activation.
      const Tensor w = randn({n, k}, wdt, seed++, 0.01);
      const Tensor s = Tensor::from_vector({big > 1e30 ? 1e-3 : 0.75}, {}, DType::f32);
      EXPECT_TRUE(dedicated_matches([&] { return scaled_linear(x, w, s); })) << dtype_name(wdt) << " " << big;
    }
  for (DType wdt : {DType::f8_e4m3fn, DType::f8_e5m2}) {
    Tensor x = randn({3, k}, DType::f32, seed++);
    x.data_as<float>()[10] = INFINITY;
    x.data_as<float>()[k + 140] = NAN;   // the tail
    x.data_as<float>()[2 * k + 64] = -INFINITY;
    const Tensor w = randn({n, k}, wdt, seed++);
    const Scales sc = scales_for(n, k, seed++);
    EXPECT_TRUE(dedicated_matches([&] { return scaled_linear(x, w, sc.rowwise); })) << dtype_name(wdt);
  }
}

TEST(GemvFp8, OneAndTwoThreadsAreBitIdentical) {
  const int threads = num_threads();
  const Tensor x = randn({4, 300}, DType::bf16, 50), w = randn({515, 300}, DType::f8_e4m3fn, 51, 8.0);
  const Scales s = scales_for(515, 300, 52);
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    ScopedPolicy forced(Policy::parse("dedicated"));
    set_num_threads(1);
    const Tensor one = scaled_linear(x, w, s.block);
    set_num_threads(2);
    const Tensor two = scaled_linear(x, w, s.block);
    EXPECT_TRUE(testing::bit_equal(one, two)) << cpu::isa_name(isa);
  }
  set_num_threads(threads);
}

// ---------------------------------------------------------------- fp8 rows on bf16 pairs (avx512bf16 level)

// The terms of each element sum (in double) to it times 2^exp2 exactly; one term for bf16 values, three for
// any f32; every slot of a line is used once; rows outside the ranges stay zero.
TEST(GemvPairs, ActivationTermsSumExactlyToTheScaledActivations) {
  const int64_t k = 150;   // two whole lines and a partial one
  for (DType dt : {DType::bf16, DType::f32}) {
    Tensor x = randn({4, k}, dt, 60).to(DType::f32);
    float* xd = x.data_as<float>();
    if (dt == DType::f32) xd[k + 3] = 1.0e-30f, xd[2 * k + 149] = -3.0e5f;   // a tiny and a large element
    const cpu::PairActivations a = cpu::pair_activations(xd, k, {{0, 2}, {3, 4}});
    EXPECT_EQ(a.terms, dt == DType::bf16 ? 1 : 3) << dtype_name(dt);
    const uint16_t* t = a.buffer.data_as<uint16_t>();
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t i = 0; i < k; ++i) {
        double sum = 0.0;
        for (int term = 0; term < a.terms; ++term)
          sum += bf16_to_f32(t[r * a.ld + (i / 64) * 64 * a.terms + term * 64 + cpu::gemv_pair_slot(static_cast<int>(i % 64))]);
        const double want = r == 2 ? 0.0 : std::ldexp(static_cast<double>(xd[r * k + i]), a.exp2);
        EXPECT_EQ(sum, want) << dtype_name(dt) << " row " << r << " element " << i;
      }
  }
  bool slot_used[64] = {};
  for (int i = 0; i < 64; ++i) slot_used[cpu::gemv_pair_slot(i)] = true;
  for (bool used : slot_used) EXPECT_TRUE(used);
}

// Where the level takes the pair route, an fp8 linear reads the pair terms (bf16 activations) or their f32 form
// (f32 activations: the route's FMA form) and not the f32 rows: a plan whose f32 rows are NaN still gives the
// products. A one-hot weight of 1.0 returns each activation bit for bit.
TEST(GemvPairs, TheRouteReadsThePairTermsAndKeepsF32ActivationsExact) {
  bool any = false;
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    const bool bf16_level = isa == cpu::Isa::avx512bf16 || isa == cpu::Isa::amx;
    const bool pairs = isa == cpu::Isa::amx          ? cpu::amx::gemv_pairs_fast()
                       : isa == cpu::Isa::avx512bf16 ? cpu::avx512bf16::gemv_pairs_fast()
                                                     : false;
    EXPECT_EQ(pairs, bf16_level) << cpu::isa_name(isa);
    if (!pairs) continue;
    any = true;
    for (DType wdt : {DType::f8_e4m3fn, DType::f8_e5m2})
      for (DType xdt : {DType::f32, DType::bf16})
        for (int64_t m : {1, 3}) {
          const int64_t n = 70, k = 200;
          Tensor w = Tensor::zeros({n, k}, wdt);
          const uint8_t one = wdt == DType::f8_e4m3fn ? 0x38 : 0x3c;
          for (int64_t j = 0; j < n; ++j) static_cast<uint8_t*>(w.data())[j * k + (j * 3) % k] = one;
          const Tensor x = randn({m, k}, xdt, 61).to(DType::f32);
          const cpu::PairActivations a = cpu::pair_activations(x.data_as<float>(), k, {{0, m}});
          std::vector<float> nan_rows(static_cast<size_t>(m * k), NAN);
          Tensor out = Tensor::zeros({m, n}, DType::f32);
          cpu::GemvPlan p{};
          p.m = m, p.n = n, p.k = k;
          p.x = nan_rows.data();
          p.w = static_cast<const uint8_t*>(w.data());
          p.w_row_bytes = k;
          p.w_type = cpu::row_type(wdt, "gemv_test", "weight");
          p.out = out.data();
          p.out_type = cpu::RowType::f32;
          p.out_m_stride = n, p.out_n_stride = 1;
          a.plan(p, 0);
          if (isa == cpu::Isa::amx) cpu::amx::gemv_rows(p, 0, n);
          else cpu::avx512bf16::gemv_rows(p, 0, n);
          for (int64_t r = 0; r < m; ++r)
            for (int64_t j = 0; j < n; ++j)
              ASSERT_EQ(out.data_as<float>()[r * n + j], x.data_as<float>()[r * k + (j * 3) % k])
                  << dtype_name(wdt) << " " << dtype_name(xdt) << " m " << m << " row " << r << " col " << j;
        }
  }
  if (!any) GTEST_SKIP() << "this host has no avx512bf16 level (AVX512_BF16 and VBMI)";
}

}  // namespace
}  // namespace fourfold
