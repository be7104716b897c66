// scaled_mm's generic tier (dequantize both operands, GEMM, bias pass) and dedicated decode kernel (M <= 8,
// b = W^T), at every ISA level the host has, against the reference: every recipe pair, both FP8 formats, out
// bf16 / f32 / f16, bias f32 / bf16, odd sizes and partial blocks, any strides, special values, threads.
#include <cmath>

#include "backends/cpu/isa.h"
#include "backends/dedicated_check.h"
#include "backends/op_args.h"
#include "fourfold/parallel.h"
#include "backends/fp8_scales.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;

using fp8_scales::blocks;
using fp8_scales::kRecipes;
using fp8_scales::scale_a;
using fp8_scales::scale_b;
using fp8_scales::tolerance;

::testing::AssertionResult tier_matches(const char* tier, const std::function<Tensor()>& call) {
  Tensor want, got;
  {
    testing::ReferenceOnly ref;
    want = call();
  }
  {
    ScopedPolicy forced(Policy::parse(tier));
    got = call();
  }
  const testing::Tolerance t = tolerance(want.dtype());
  return all_close(got, want, t.rtol, t.atol) << " (" << tier << ")";
}

::testing::AssertionResult dedicated_matches(const std::function<Tensor()>& call, bool dedicated = true) {
  return testing::matches_at_every_level(call, dedicated, &tolerance);
}

// The generic tier: M = 129 and K = 140 cross a 128 block boundary (partial blocks); N is odd.
TEST(ScaledMmGeneric, EveryRecipePairMatchesTheReference) {
  const int64_t m = 129, n = 21, k = 140;
  uint64_t seed = 1;
  for (DType adt : {DType::f8_e4m3fn, DType::f8_e5m2}) {
    const DType bdt = adt == DType::f8_e4m3fn ? DType::f8_e5m2 : DType::f8_e4m3fn;   // mixing is allowed
    const Tensor a = testing::randn({m, k}, adt, seed++);
    const Tensor w = testing::randn({n, k}, bdt, seed++);
    for (ScaleRecipe ra : kRecipes)
      for (ScaleRecipe rb : kRecipes) {
        const Tensor sa = scale_a(ra, m, k, seed++), sb = scale_b(rb, k, n, seed++);
        const Tensor bias = testing::randn({n}, DType::f32, seed++);
        EXPECT_TRUE(tier_matches("generic", [&] { return scaled_mm(a, w.transpose(0, 1), sa, sb, bias, DType::f32); }));
        EXPECT_TRUE(tier_matches("generic", [&] {
          return scaled_mm(a, w.transpose(0, 1).contiguous(), sa, sb, bias.to(DType::bf16), DType::bf16);
        }));
      }
  }
}

TEST(ScaledMmDedicated, EveryRecipePairOutAndBiasMatchesTheReference) {
  const int64_t n = 131, k = 270;
  {
    uint64_t seed = 100;
    for (DType dt : {DType::f8_e4m3fn, DType::f8_e5m2})
      for (int64_t m : {1, 5}) {
        const Tensor a = testing::randn({m, k}, dt, seed++), w = testing::randn({n, k}, dt, seed++);
        const Tensor b = w.transpose(0, 1);
        for (ScaleRecipe ra : kRecipes)
          for (ScaleRecipe rb : kRecipes) {
            const Tensor sa = scale_a(ra, m, k, seed++), sb = scale_b(rb, k, n, seed++);
            const Tensor bias = testing::randn({n}, DType::f32, seed++);
            EXPECT_TRUE(dedicated_matches([&] { return scaled_mm(a, b, sa, sb); }));
            EXPECT_TRUE(dedicated_matches([&] { return scaled_mm(a, b, sa, sb, bias, DType::f32); }));
            EXPECT_TRUE(dedicated_matches([&] { return scaled_mm(a, b, sa, sb, bias.to(DType::bf16), DType::f16); }));
          }
      }
  }
}

TEST(ScaledMmDedicated, StridesAndWhatItDeclines) {
  {
    const int64_t m = 5, n = 37, k = 150;
    const Tensor a = testing::non_contiguous(testing::randn({m, k}, DType::f8_e4m3fn, 200));
    const Tensor wide = testing::randn({n, k + 6}, DType::f8_e4m3fn, 201);
    const Tensor b = wide.narrow(1, 3, k).transpose(0, 1);   // K contiguous, rows k + 6 apart
    const Tensor sa = scale_a(ScaleRecipe::rowwise, m, k, 202), sb = scale_b(ScaleRecipe::block_128x128, k, n, 203);
    EXPECT_TRUE(dedicated_matches([&] { return scaled_mm(a, b, sa, sb); }));
    // b [K, N] contiguous (N contiguous) and M > 8 are the packed GEMM's (scaled_mm_prefill.cpp,
    // cpu_scaled_prefill_test.cpp): still the dedicated tier.
    EXPECT_TRUE(dedicated_matches([&] { return scaled_mm(a, b.contiguous(), sa, sb); }, true));
    const Tensor a9 = testing::randn({9, k}, DType::f8_e4m3fn, 204);
    EXPECT_TRUE(dedicated_matches([&] { return scaled_mm(a9, b, scale_a(ScaleRecipe::rowwise, 9, k, 205), sb); }, true));
  }
}

// Every b code through a one-hot a: subnormals, +-max, NaN and inf come through exactly (f32 out).
TEST(ScaledMmDedicated, EveryCodeIncludingSubnormalsMaxAndNaN) {
  {
    for (DType dt : {DType::f8_e4m3fn, DType::f8_e5m2}) {
      const int64_t k = 19;
      Tensor w = Tensor::zeros({256, k}, dt);
      for (int64_t c = 0; c < 256; ++c) static_cast<uint8_t*>(w.data())[c * k + k - 1] = static_cast<uint8_t>(c);
      Tensor a = Tensor::zeros({1, k}, dt);
      store_from_double(dt, static_cast<uint8_t*>(a.data()) + k - 1, 1.0);
      const Tensor s = Tensor::from_vector({1.0}, {}, DType::f32);
      EXPECT_TRUE(testing::matches_at_every_level(
          [&] { return scaled_mm(a, w.transpose(0, 1), s, s, std::nullopt, DType::f32); }, true, &testing::exact))
          << dtype_name(dt);
    }
  }
}

TEST(ScaledMmDedicated, OneAndTwoThreadsAreBitIdentical) {
  const int threads = num_threads();
  const Tensor a = testing::randn({4, 300}, DType::f8_e4m3fn, 300);
  const Tensor b = testing::randn({515, 300}, DType::f8_e4m3fn, 301).transpose(0, 1);
  const Tensor sa = scale_a(ScaleRecipe::block_1x128, 4, 300, 302), sb = scale_b(ScaleRecipe::block_128x128, 300, 515, 303);
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    ScopedPolicy forced(Policy::parse("dedicated"));
    set_num_threads(1);
    const Tensor one = scaled_mm(a, b, sa, sb);
    set_num_threads(2);
    const Tensor two = scaled_mm(a, b, sa, sb);
    EXPECT_TRUE(testing::bit_equal(one, two)) << cpu::isa_name(isa);
  }
  set_num_threads(threads);
}

}  // namespace
}  // namespace fourfold
