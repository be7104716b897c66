// scaled_linear with FP4 weights (NVFP4: e4m3 scales per 16 values and a global scale; MXFP4: e8m0 scales per
// 32): the dedicated tier (the decode GEMV for M <= 8, the prefill GEMM's dequantizing packer above) at every
// ISA level the host has, and the generic tier, against the float64 reference; every code through a one-hot x.
#include <cmath>
#include <cstring>

#include "backends/dedicated_check.h"
#include "backends/tier_check.h"
#include "core/fp4_blocks.h"
#include "fourfold/ops.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

// Random codes: every nibble value appears.
Tensor random_codes(int64_t n, int64_t k, uint64_t seed) {
  Tensor w = Tensor::empty({n, k / 2}, DType::f4_e2m1fn_x2);
  auto* b = static_cast<uint8_t*>(w.data());
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < n * k / 2; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    b[i] = static_cast<uint8_t>(s >> 56);
  }
  return w;
}

struct Fp4Weight {
  Tensor codes, scale;
  OptTensor global;
};

Fp4Weight nvfp4(int64_t n, int64_t k, uint64_t seed) {
  return {random_codes(n, k, seed), testing::rand_uniform({n, k / 16}, DType::f8_e4m3fn, seed + 1, 0.01, 3.0),
          Tensor::from_vector({0.37}, {1}, DType::f32)};
}

Fp4Weight mxfp4(int64_t n, int64_t k, uint64_t seed) {
  return {random_codes(n, k, seed), testing::rand_uniform({n, k / 32}, DType::f8_e8m0fnu, seed + 1, 0.01, 4.0),
          std::nullopt};
}

// f32 sums over K <= 528 terms of size ~1 (e2m1 <= 6 times scales <= 3): a few f32 roundings of a sum of |terms|.
testing::Tolerance tolerance(DType out) {
  return out == DType::f32 ? testing::Tolerance{2e-5, 2e-4} : testing::product_tolerance(out);
}

// K = 528: 16 whole groups of 32 and a half group (NVFP4's odd block count); N = 37 leaves a row-group tail.
TEST(Fp4Linear, DecodeAndPrefillMatchTheReferenceAtEveryLevel) {
  uint64_t seed = 7;
  for (bool nv : {true, false})
    for (int64_t k : {64, 528, 1024}) {
      if (!nv && k % 32 != 0) continue;
      const int64_t n = 37;
      const Fp4Weight w = nv ? nvfp4(n, k, seed++) : mxfp4(n, k, seed++);
      for (DType xdt : {DType::f32, DType::bf16})
        for (int64_t m : {1, 3, 8, 20}) {
          const Tensor x = testing::randn({m, k}, xdt, seed++), b = testing::randn({n}, xdt, seed++);
          const std::string what = std::string(nv ? "nvfp4" : "mxfp4") + " k " + std::to_string(k) + " " +
                                   std::string(dtype_name(xdt)) + " m " + std::to_string(m);
          EXPECT_TRUE(testing::matches_at_every_level([&] { return scaled_linear(x, w.codes, w.scale, b, w.global); },
                                                      true, &tolerance))
              << what;
          EXPECT_TRUE(testing::matches_at_every_level(
              [&] { return scaled_linear(testing::non_contiguous(x), w.codes, w.scale, std::nullopt, w.global); }, true,
              &tolerance))
              << what << " non-contiguous x";
          tier_check::expect_matches("linear", Tier::generic,
                                     [&] { return tier_check::Outputs{scaled_linear(x, w.codes, w.scale, b, w.global)}; },
                                     xdt == DType::f32 ? tier_check::Tol{2e-5, 2e-4} : tier_check::tol(xdt), what, true, false);
        }
    }
}

// Each of the 16 codes, in the low and the high nibble, through a one-hot x at a column of every lane position:
// out[n] = e2m1(code) * scale * global exactly (one product rounding at most).
TEST(Fp4Linear, EveryCodeInEveryNibbleIsExact) {
  const int64_t k = 64, n = 16;
  for (int half : {0, 1})
    for (int64_t col : {0, 1, 14, 17, 31, 32, 63}) {
      if (col % 2 != half) continue;
      Tensor w = Tensor::zeros({n, k / 2}, DType::f4_e2m1fn_x2);
      for (int64_t c = 0; c < n; ++c) static_cast<uint8_t*>(w.data())[c * k / 2 + col / 2] = static_cast<uint8_t>(c << (4 * half));
      const Tensor scale = Tensor::full({n, k / 16}, 0.75, DType::f8_e4m3fn);
      Tensor x = Tensor::zeros({1, k}, DType::f32);
      x.data_as<float>()[col] = 1.0f;
      EXPECT_TRUE(testing::matches_at_every_level([&] { return scaled_linear(x, w, scale); }, true, &testing::exact))
          << "column " << col;
      testing::ReferenceOnly ref;
      const Tensor out = scaled_linear(x, w, scale);
      for (int64_t c = 0; c < n; ++c) EXPECT_EQ(out.data_as<float>()[c], fp4_e2m1_to_f32(static_cast<uint8_t>(c)) * 0.75f);
    }
}

// A NaN scale code (e8m0 0xFF, e4m3 0x7F) makes its row's outputs NaN and no other: on the f32 route (f32 x) and
// on the pair route (bf16 x), whose e4m3 scales are read as bits and watched for NaN codes.
TEST(Fp4Linear, ANaNScaleGivesNaNAndOthersStayFinite) {
  const int64_t k = 128, n = 8;
  const Tensor w = random_codes(n, k, 3);
  for (bool nv : {false, true})
    for (DType xdt : {DType::f32, DType::bf16}) {
      const int64_t blocks = k / (nv ? 16 : 32);
      Tensor scale = Tensor::full({n, blocks}, 1.0, nv ? DType::f8_e4m3fn : DType::f8_e8m0fnu);
      static_cast<uint8_t*>(scale.data())[blocks * 3 + 1] = nv ? 0x7F : 0xFF;   // row 3's second block
      const Tensor x = testing::randn({1, k}, xdt, 4);
      for (cpu::Isa isa : cpu::host_isas()) {
        cpu::ScopedIsa level(isa);
        const Tensor out = testing::under("dedicated", [&] { return scaled_linear(x, w, scale); }).to(DType::f32);
        for (int64_t c = 0; c < n; ++c)
          EXPECT_EQ(std::isnan(out.data_as<float>()[c]), c == 3) << cpu::isa_name(isa) << (nv ? " nvfp4 " : " mxfp4 ") << dtype_name(xdt);
      }
    }
}

TEST(Fp4Linear, BadArgumentsAreRefusedByName) {
  const Tensor x = testing::randn({2, 64}, DType::f32, 1);
  const Tensor w = random_codes(8, 64, 2);
  const Tensor s16 = Tensor::full({8, 4}, 1.0, DType::f8_e4m3fn);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { scaled_linear(x, random_codes(8, 32, 2), s16); }, {"scaled_linear", "weight", "K / 2"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { scaled_linear(x, w, Tensor::full({8, 2}, 1.0, DType::f8_e4m3fn)); },
                                    {"scaled_linear", "weight_scale", "[8, 4]"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { scaled_linear(x, w, Tensor::full({8, 4}, 1.0, DType::f32)); },
                                    {"scaled_linear", "weight_scale"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { scaled_linear(testing::randn({2, 48}, DType::f32, 1), random_codes(8, 48, 2),
                                                        Tensor::full({8, 1}, 1.0, DType::f8_e8m0fnu)); },
                                    {"scaled_linear", "x", "multiple of 32"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { scaled_linear(x, w, s16, std::nullopt, Tensor::full({2}, 1.0, DType::f32)); },
                                    {"scaled_linear", "global_scale", "one element"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { scaled_linear(x, testing::randn({8, 64}, DType::f8_e4m3fn, 3), Tensor::full({}, 1.0, DType::f32), std::nullopt,
                          Tensor::full({1}, 1.0, DType::f32)); },
      {"scaled_linear", "global_scale"}));
}

}  // namespace
}  // namespace fourfold
