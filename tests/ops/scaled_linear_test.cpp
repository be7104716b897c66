// Weight-only low precision linear: f32 x with bf16/f16 weights, and scaled_linear's fp8 weights with
// tensorwise, rowwise and 128x128-block scales, on the reference and generic tiers, plus its errors.
#include "support/test_support.h"

#include "fourfold/policy.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

// x @ (w * scale)^T + b over the values as stored, in double. scale_of(n, k) gives the scale.
template <class ScaleOf>
std::vector<double> hand_scaled_linear(const Tensor& x, const Tensor& w, ScaleOf scale_of, const Tensor* b) {
  const auto xv = x.to_vector(), wv = w.to_vector();
  const auto bv = b ? b->to_vector() : std::vector<double>{};
  const int64_t m_size = x.size(0), k_size = x.size(1), n_size = w.size(0);
  std::vector<double> out;
  for (int64_t m = 0; m < m_size; ++m)
    for (int64_t n = 0; n < n_size; ++n) {
      double acc = b ? bv[n] : 0.0;
      for (int64_t k = 0; k < k_size; ++k) acc += xv[m * k_size + k] * wv[n * k_size + k] * scale_of(n, k);
      out.push_back(acc);
    }
  return out;
}

TEST(LowPrecisionWeights, F32ActivationsWithBf16AndF16WeightsMatchTheUpcastWeight) {
  for (const char* tier : {"reference", "generic"}) {
    ScopedPolicy policy(Policy::parse(tier));
    for (DType wdt : {DType::bf16, DType::f16}) {
      const Tensor x = randn({3, 37}, DType::f32, 1), w = randn({11, 37}, wdt, 2), b = randn({11}, DType::f32, 3);
      const Tensor y = linear(x, w, b);
      EXPECT_EQ(y.dtype(), DType::f32);
      // The weight's stored values are exact in f32, so this is the same product in f32.
      EXPECT_TRUE(all_close(y, hand_scaled_linear(x, w, [](int64_t, int64_t) { return 1.0; }, &b), 1e-5, 1e-5))
          << tier << " " << dtype_name(wdt);
      EXPECT_TRUE(all_close(linear(x, testing::non_contiguous(w)), linear(x, w.to(DType::f32)).to_vector(), 1e-5,
                            1e-5));
    }
  }
}

// N = 130 and K = 260 leave partial blocks on both edges of the 128x128 grid.
TEST(ScaledLinear, EveryRecipeMatchesTheHandDequantizedProduct) {
  const int64_t m = 3, n = 130, k = 260;
  for (const char* tier : {"reference", "generic"}) {
    ScopedPolicy policy(Policy::parse(tier));
    for (DType wdt : {DType::f8_e4m3fn, DType::f8_e5m2}) {
      for (DType xdt : {DType::f32, DType::bf16}) {
        const Tensor x = randn({m, k}, xdt, 4), w = randn({n, k}, wdt, 5);
        const Tensor b = randn({n}, xdt, 6);
        const Tensor tensorwise = Tensor::from_vector({0.5}, {}, DType::f32);
        const Tensor rowwise = testing::rand_uniform({n, 1}, DType::f32, 7, 0.25, 2.0);
        const Tensor block = testing::rand_uniform({2, 3}, DType::f32, 8, 0.25, 2.0);
        const auto rv = rowwise.to_vector(), bv = block.to_vector();
        const double rtol = xdt == DType::bf16 ? 1e-2 : 1e-5;
        EXPECT_TRUE(all_close(scaled_linear(x, w, tensorwise, b),
                              hand_scaled_linear(x, w, [](int64_t, int64_t) { return 0.5; }, &b), rtol, rtol))
            << tier;
        EXPECT_TRUE(all_close(scaled_linear(x, w, rowwise),
                              hand_scaled_linear(x, w, [&](int64_t r, int64_t) { return rv[r]; }, nullptr), rtol,
                              rtol))
            << tier;
        const Tensor y = scaled_linear(x, testing::non_contiguous(w), block, b);
        EXPECT_EQ(y.dtype(), xdt);
        EXPECT_TRUE(all_close(y, hand_scaled_linear(x, w, [&](int64_t r, int64_t c) { return bv[(r / 128) * 3 + c / 128]; }, &b),
                              rtol, rtol))
            << tier << " " << dtype_name(wdt) << " " << dtype_name(xdt);
      }
    }
  }
}

TEST(ScaledLinear, Fp8SubnormalWeightsSurvive) {
  // 2^-9 is e4m3fn's smallest subnormal and 2^-16 e5m2's: a kernel that flushes them gives 0.
  for (const char* tier : {"reference", "generic"}) {
    ScopedPolicy policy(Policy::parse(tier));
    for (auto [wdt, tiny] : {std::pair{DType::f8_e4m3fn, 0x1p-9}, std::pair{DType::f8_e5m2, 0x1p-16}}) {
      const Tensor w = Tensor::full({2, 4}, tiny, wdt);
      const Tensor x = Tensor::full({1, 4}, 1.0, DType::f32);
      EXPECT_TRUE(all_close(scaled_linear(x, w, Tensor::full({1}, 4.0, DType::f32)), {16 * tiny, 16 * tiny}, 0, 0))
          << tier;
    }
  }
}

TEST(ScaledLinear, BadArgumentsNameOpAndArgument) {
  const Tensor x = Tensor::zeros({2, 256}, DType::f32), w = Tensor::zeros({4, 256}, DType::f8_e4m3fn);
  const Tensor s = Tensor::full({1}, 1.0, DType::f32);
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { scaled_linear(x, w.to(DType::bf16), s); },
                                               {"scaled_linear", "'weight'", "bfloat16"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { scaled_linear(x.to(DType::f16), w, s); },
                                               {"scaled_linear", "'x'", "float16"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { scaled_linear(x, w, s.to(DType::bf16)); },
                                               {"scaled_linear", "'weight_scale'", "bfloat16"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { scaled_linear(x, w, Tensor::zeros({4, 2}, DType::f32)); },
                                               {"scaled_linear", "'weight_scale'", "[4, 1]", "[1, 2]", "[4, 2]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { scaled_linear(x, Tensor::zeros({4, 3}, DType::f8_e5m2), s); },
                                               {"scaled_linear", "'weight'", "size 256"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { scaled_linear(x, w, s, Tensor::zeros({4}, DType::bf16)); }, {"scaled_linear", "'bias'", "bfloat16"}));
}

}  // namespace
}  // namespace fourfold
