// The dedicated FP8 prefill path: scaled_linear with M > 8 rows and scaled_mm beyond the decode GEMV, both run
// by the packed GEMM with fp8 operands converted and scaled while packing. At every ISA level the host has,
// against the reference (FP8 against the dequantized reference): e4m3 and e5m2, every scale recipe, odd M/N/K
// (partial 128 blocks, register-tile and vector tails, K past one 512 reduction block), bias or not, out
// f32/bf16/f16, both b layouts, every fp8 code exactly (subnormals, +-max, NaN, inf), outputs poisoned before
// the call, empty dims, 1 vs 2 threads bit-identical, and the generic tier still forceable.
#include <cmath>
#include <limits>
#include <utility>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/isa.h"
#include "backends/dedicated_check.h"
#include "fourfold/parallel.h"
#include "backends/fp8_scales.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

using fp8_scales::blocks;
using fp8_scales::kRecipes;
using fp8_scales::scale_a;
using fp8_scales::scale_b;
using fp8_scales::tolerance;

::testing::AssertionResult dedicated_matches(const std::function<Tensor()>& call) {
  return testing::matches_at_every_level(call, true, &tolerance);
}

struct Shape3 {
  int64_t m, n, k;
};
// Partial 128 blocks on every edge, tails of every register tile (12/6/4 rows, 32/16/8 columns), K past 512.
constexpr Shape3 kShapes[] = {{9, 130, 270}, {37, 67, 600}};

TEST(ScaledLinearPrefill, EveryFormatRecipeAndBiasMatchesTheReference) {
  uint64_t seed = 1;
  for (const Shape3& s : kShapes)
    for (DType wdt : {DType::f8_e4m3fn, DType::f8_e5m2})
      for (DType xdt : {DType::f32, DType::bf16}) {
        const Tensor x = randn({s.m, s.k}, xdt, seed++), w = randn({s.n, s.k}, wdt, seed++);
        const Tensor b = randn({s.n}, xdt, seed++);
        const Tensor scales[] = {Tensor::from_vector({0.75}, {}, DType::f32),
                                 testing::rand_uniform({s.n, 1}, DType::f32, seed++, 0.25, 2.0),
                                 testing::rand_uniform({blocks(s.n), blocks(s.k)}, DType::f32, seed++, 0.25, 2.0)};
        for (const Tensor& scale : scales) {
          EXPECT_TRUE(dedicated_matches([&] { return scaled_linear(x, w, scale, b); }))
              << dtype_name(wdt) << " " << dtype_name(xdt) << " m " << s.m << " scale " << scale.describe();
          EXPECT_TRUE(dedicated_matches([&] { return scaled_linear(testing::non_contiguous(x), w, scale); }))
              << dtype_name(wdt) << " " << dtype_name(xdt) << " m " << s.m << " scale " << scale.describe();
        }
      }
}

// b = W^T (K contiguous, a checkpoint's weight) and b [K, N] contiguous (N contiguous); mixed formats.
TEST(ScaledMmPrefill, EveryRecipePairLayoutOutAndBiasMatchesTheReference) {
  uint64_t seed = 100;
  for (const Shape3& s : kShapes)
    for (DType adt : {DType::f8_e4m3fn, DType::f8_e5m2}) {
      const DType bdt = s.m == 9 ? adt : (adt == DType::f8_e4m3fn ? DType::f8_e5m2 : DType::f8_e4m3fn);
      const Tensor a = randn({s.m, s.k}, adt, seed++), w = randn({s.n, s.k}, bdt, seed++);
      const Tensor bias = randn({s.n}, DType::f32, seed++);
      for (ScaleRecipe ra : kRecipes)
        for (ScaleRecipe rb : kRecipes) {
          if (s.m != 9 && ra != rb) continue;   // every pair on the small shape, the same recipes on the larger
          const Tensor sa = scale_a(ra, s.m, s.k, seed++), sb = scale_b(rb, s.k, s.n, seed++);
          const Tensor bt = w.transpose(0, 1), bc = bt.contiguous();
          const auto where = [&] {
            return std::string(dtype_name(adt)) + " m " + std::to_string(s.m) + " recipes " +
                   std::to_string(static_cast<int>(ra)) + "," + std::to_string(static_cast<int>(rb));
          };
          EXPECT_TRUE(dedicated_matches([&] { return scaled_mm(a, bt, sa, sb); })) << where();
          EXPECT_TRUE(dedicated_matches([&] { return scaled_mm(a, bc, sa, sb, bias, DType::f32); })) << where();
          EXPECT_TRUE(dedicated_matches([&] { return scaled_mm(a, bt, sa, sb, bias.to(DType::bf16), DType::f16); }))
              << where();
        }
    }
}

// Every fp8 code through one-hot operands: out = code value * scale exactly, so subnormals must survive the
// in-register conversion, +-max must not overflow, NaN stay NaN and e5m2's inf stay inf. k = 16 puts the code
// in the 8-wide vector transposes, k = 19 in the scalar tail; the scale 0.5 checks it is applied exactly.
// k = 64 and 160 (N = 256) are shapes the GEMM's direct path takes for the weight where the level has it
// (gemm_direct.cpp): the code in a whole 64-code line of its byte lookups, and in the 32-code tail of the second
// chunk, decoded by its table; bf16 x takes its vdpbf16ps block, f32 x its FMA block (on AMX tiles f32 x is three
// bf16 terms: e5m2 weights keep it off the direct path, since inf times a zero term is NaN).
TEST(ScaledPrefill, EveryCodeIncludingSubnormalsMaxAndNaN) {
  for (DType dt : {DType::f8_e4m3fn, DType::f8_e5m2})
    for (int64_t k : {16, 19, 64, 160})
      for (double sv : {1.0, 0.5}) {
        const int64_t col = k - 1;
        Tensor codes = Tensor::zeros({256, k}, dt);   // row c holds code c at col
        for (int64_t c = 0; c < 256; ++c) static_cast<uint8_t*>(codes.data())[c * k + col] = static_cast<uint8_t>(c);
        Tensor one_x = Tensor::zeros({9, k}, DType::f32);
        for (int64_t m = 0; m < 9; ++m) one_x.data_as<float>()[m * k + col] = 1.0f;
        Tensor one_a = Tensor::zeros({9, k}, dt);
        for (int64_t m = 0; m < 9; ++m) store_from_double(dt, static_cast<uint8_t*>(one_a.data()) + m * k + col, 1.0);
        const Tensor s = Tensor::from_vector({sv}, {}, DType::f32), one = Tensor::from_vector({1.0}, {}, DType::f32);
        const auto exact = [&](const std::function<Tensor()>& call) {
          return testing::matches_at_every_level(call, true, &testing::exact);
        };
        const std::string where = std::string(dtype_name(dt)) + " k " + std::to_string(k);
        // The weight (B) side: scaled_linear, and scaled_mm with b = W^T and b [K, N] N-contiguous.
        EXPECT_TRUE(exact([&] { return scaled_linear(one_x, codes, s); })) << where;
        EXPECT_TRUE(exact([&] { return scaled_linear(one_x.to(DType::bf16), codes, s); })) << where << " bf16 x";
        EXPECT_TRUE(exact([&] { return scaled_mm(one_a, codes.transpose(0, 1), one, s, std::nullopt, DType::f32); }))
            << where;
        EXPECT_TRUE(exact([&] {
          return scaled_mm(one_a, codes.transpose(0, 1).contiguous(), one, s, std::nullopt, DType::f32);
        })) << where;
        // The A side: every code as a row of a, one-hot b.
        Tensor one_b = Tensor::zeros({k, 3}, dt);
        for (int64_t n = 0; n < 3; ++n) store_from_double(dt, static_cast<uint8_t*>(one_b.data()) + col * 3 + n, 1.0);
        EXPECT_TRUE(exact([&] { return scaled_mm(codes, one_b, s, one, std::nullopt, DType::f32); })) << where;
        // The reference's own value of the smallest subnormal (code 1), which the kernels matched: not zero.
        testing::ReferenceOnly ref;
        EXPECT_EQ(scaled_linear(one_x, codes, s).data_as<float>()[1],
                  static_cast<float>(std::ldexp(sv, dt == DType::f8_e4m3fn ? -9 : -16)));
      }
}

TEST(ScaledPrefill, NaNAndInfInXPropagate) {
  Tensor x = randn({11, 40}, DType::f32, 200);
  x.data_as<float>()[3] = NAN;
  x.data_as<float>()[40 * 5 + 39] = INFINITY;
  const Tensor w = randn({21, 40}, DType::f8_e4m3fn, 201);
  const Tensor s = testing::rand_uniform({21, 1}, DType::f32, 202, 0.25, 2.0);
  EXPECT_TRUE(dedicated_matches([&] { return scaled_linear(x, w, s); }));
}

TEST(ScaledPrefill, EmptyDims) {
  const Tensor s = Tensor::from_vector({0.5}, {}, DType::f32);
  const Tensor bias = randn({5}, DType::f32, 210);
  // K = 0 gives the bias (or zeros).
  const Tensor x0 = Tensor::empty({12, 0}, DType::f32), w0 = Tensor::empty({5, 0}, DType::f8_e4m3fn);
  EXPECT_TRUE(dedicated_matches([&] { return scaled_linear(x0, w0, s, bias); }));
  const Tensor a0 = Tensor::empty({12, 0}, DType::f8_e5m2), b0 = Tensor::empty({0, 5}, DType::f8_e5m2);
  EXPECT_TRUE(dedicated_matches([&] { return scaled_mm(a0, b0, s, s.reshape({1, 1}), bias, DType::f32); }));
  // N = 0.
  const Tensor x = randn({12, 7}, DType::f32, 211), wn = Tensor::empty({0, 7}, DType::f8_e4m3fn);
  EXPECT_TRUE(dedicated_matches([&] { return scaled_linear(x, wn, s); }));
}

// The kernels called directly on outputs filled with NaN: every element must be written.
cpu::GemmPieces pieces_for(cpu::Isa isa) {
  switch (isa) {
    case cpu::Isa::amx: return FOURFOLD_GEMM_PIECES(amx);
    case cpu::Isa::avx512bf16: return FOURFOLD_GEMM_PIECES(avx512bf16);
    case cpu::Isa::avx512: return FOURFOLD_GEMM_PIECES(avx512);
    case cpu::Isa::avx2: return FOURFOLD_GEMM_PIECES(avx2);
    default: return FOURFOLD_GEMM_PIECES(scalar);
  }
}

TEST(ScaledPrefill, PoisonedOutputsAreFullyWritten) {
  const int64_t m = 29, n = 45, k = 150;
  const Tensor x = randn({m, k}, DType::bf16, 220), w = randn({n, k}, DType::f8_e4m3fn, 221);
  const Tensor ws = testing::rand_uniform({blocks(n), blocks(k)}, DType::f32, 222, 0.25, 2.0);
  const Tensor a = randn({m, k}, DType::f8_e5m2, 223), b = randn({k, n}, DType::f8_e4m3fn, 224);
  const Tensor sa = scale_a(ScaleRecipe::block_1x128, m, k, 225), sb = scale_b(ScaleRecipe::block_128x128, k, n, 226);
  Tensor want_linear, want_mm;
  {
    testing::ReferenceOnly ref;
    want_linear = scaled_linear(x, w, ws);
    want_mm = scaled_mm(a, b, sa, sb, std::nullopt, DType::f32);
  }
  for (cpu::Isa isa : cpu::host_isas()) {
    const cpu::GemmPieces pieces = pieces_for(isa);
    Tensor out = Tensor::full({m, n}, NAN, DType::bf16);
    const LinearArgs la{x, w, nullptr, out, &ws, ScaleRecipe::block_128x128};
    ASSERT_TRUE(cpu::linear_prefill_covers(la));
    cpu::linear_prefill(la, pieces);
    EXPECT_TRUE(all_close(out, want_linear, 8e-3, 1e-3)) << cpu::isa_name(isa);
    Tensor out_mm = Tensor::full({m, n}, NAN, DType::f32);
    const ScaledMmArgs sm{a, b, sa, sb, ScaleRecipe::block_1x128, ScaleRecipe::block_128x128, nullptr, out_mm};
    ASSERT_TRUE(cpu::scaled_mm_prefill_covers(sm));
    cpu::scaled_mm_prefill(sm, pieces);
    EXPECT_TRUE(all_close(out_mm, want_mm, 1e-5, 1e-4)) << cpu::isa_name(isa);
  }
}

// The GEMM's direct path for fp8 weights (decoded to bf16 a 128-code chunk at a time, each chunk's sums times its
// scale; gemm_direct.cpp) forced at every level, where below avx512bf16 its block is the scalar emulation and the
// decode the table: K short of one chunk, two chunks and a part, and nine chunks; N over two 128-row scale
// blocks; M past one group of 32 rows, and past the direct path's rows at avx512bf16 (the driver cuts the tiles:
// 224 bf16 or 64 f32 rows at K = 1152); every weight scale recipe (the large shape: 128x128 blocks), bf16 and
// f32 x, bias.
TEST(ScaledLinearPrefill, DirectPathForFp8WeightsAtEveryLevel) {
  uint64_t seed = 300;
  for (const Shape3& s : {Shape3{9, 64, 96}, Shape3{40, 160, 320}, Shape3{300, 64, 1152}})
    for (DType wdt : {DType::f8_e4m3fn, DType::f8_e5m2})
      for (DType xdt : {DType::bf16, DType::f32}) {
        const Tensor x = randn({s.m, s.k}, xdt, seed++), w = randn({s.n, s.k}, wdt, seed++);
        const Tensor b = randn({s.n}, xdt, seed++);
        const std::pair<Tensor, ScaleRecipe> scales[] = {
            {Tensor::from_vector({0.75}, {1, 1}, DType::f32), ScaleRecipe::tensorwise},
            {testing::rand_uniform({s.n, 1}, DType::f32, seed++, 0.25, 2.0), ScaleRecipe::rowwise},
            {testing::rand_uniform({blocks(s.n), blocks(s.k)}, DType::f32, seed++, 0.25, 2.0), ScaleRecipe::block_128x128}};
        for (const auto& [scale, recipe] : scales) {
          if (s.m == 300 && recipe != ScaleRecipe::block_128x128) continue;   // the slow one: its scalar emulation
          Tensor want;
          {
            testing::ReferenceOnly ref;
            want = scaled_linear(x, w, scale, b);
          }
          for (cpu::Isa isa : cpu::host_isas()) {
            cpu::GemmPieces pieces = pieces_for(isa);
            pieces.direct_fast = [] { return true; };
            // The tiles split f32 rows into bf16 terms, where an e5m2 infinity times a zero term would be NaN.
            const bool split_meets_inf = isa == cpu::Isa::amx && wdt == DType::f8_e5m2 && xdt == DType::f32;
            ASSERT_EQ(pieces.direct_covers(cpu::operand(x), cpu::operand(w, true, scale, recipe), 32, s.n, s.k),
                      !split_meets_inf) << cpu::isa_name(isa);
            Tensor out = Tensor::full({s.m, s.n}, NAN, xdt);
            cpu::linear_prefill(LinearArgs{x, w, &b, out, &scale, recipe}, pieces);
            EXPECT_TRUE(all_close(out, want, tolerance(xdt).rtol, tolerance(xdt).atol))
                << cpu::isa_name(isa) << " " << dtype_name(wdt) << " " << dtype_name(xdt) << " m " << s.m << " k " << s.k
                << " recipe " << static_cast<int>(recipe);
          }
        }
      }
}

// The per-element summation order does not depend on the tiling, so the thread count does not change a bit.
TEST(ScaledPrefill, OneAndTwoThreadsAreBitIdentical) {
  const int threads = num_threads();
  const Tensor x = randn({70, 300}, DType::bf16, 230), w = randn({515, 300}, DType::f8_e4m3fn, 231, 8.0);
  const Tensor ws = testing::rand_uniform({blocks(515), blocks(300)}, DType::f32, 232, 0.25, 2.0);
  const Tensor a = randn({70, 300}, DType::f8_e4m3fn, 233), b = w.transpose(0, 1);
  const Tensor sa = scale_a(ScaleRecipe::block_1x128, 70, 300, 234), sb = scale_b(ScaleRecipe::block_128x128, 300, 515, 235);
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    ScopedPolicy forced(Policy::parse("dedicated"));
    set_num_threads(1);
    const Tensor one = scaled_linear(x, w, ws), one_mm = scaled_mm(a, b, sa, sb);
    set_num_threads(2);
    const Tensor two = scaled_linear(x, w, ws), two_mm = scaled_mm(a, b, sa, sb);
    EXPECT_TRUE(testing::bit_equal(one, two)) << cpu::isa_name(isa);
    EXPECT_TRUE(testing::bit_equal(one_mm, two_mm)) << cpu::isa_name(isa);
  }
  set_num_threads(threads);
}

// The generic and reference tiers stay forceable for the calls the dedicated tier now takes.
TEST(ScaledPrefill, SlowerTiersStayForceable) {
  const Tensor a = randn({20, 64}, DType::f8_e4m3fn, 240), b = randn({64, 24}, DType::f8_e4m3fn, 241);
  const Tensor s = Tensor::from_vector({0.5}, {}, DType::f32);
  for (const char* tier : {"generic", "reference"}) {
    reset_dispatch_counts();
    {
      ScopedPolicy forced(Policy::parse(tier));
      (void)scaled_mm(a, b, s, s.reshape({1, 1}));
    }
    const auto counts = dispatch_counts();
    ASSERT_EQ(counts.size(), 1u);
    EXPECT_EQ(counts[0].calls[static_cast<int>(Tier::dedicated)], 0u) << tier;
  }
}

}  // namespace
}  // namespace fourfold
