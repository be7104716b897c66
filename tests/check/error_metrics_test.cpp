// ULP distance, PSNR, max abs/rel error and exactness on known inputs.
#include <cmath>
#include <limits>

#include "check/error_metrics.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

TEST(ErrorMetrics, UlpDistanceCountsRepresentableValues) {
  EXPECT_EQ(ulp_distance(1.0, 1.0, DType::f32), 0);
  EXPECT_EQ(ulp_distance(1.0, 1.0 + std::ldexp(1.0, -23), DType::f32), 1);
  EXPECT_EQ(ulp_distance(1.0, 1.0 + std::ldexp(1.0, -7) * 3, DType::bf16), 3);
  EXPECT_EQ(ulp_distance(-0.0, 0.0, DType::f32), 0);
  // Across zero: the smallest subnormals on each side are two steps apart.
  EXPECT_EQ(ulp_distance(-std::ldexp(1.0, -9), std::ldexp(1.0, -9), DType::f8_e4m3fn), 2);
  EXPECT_EQ(ulp_distance(448.0, 416.0, DType::f8_e4m3fn), 1);
  EXPECT_EQ(ulp_distance(NAN, NAN, DType::f32), 0);
  EXPECT_EQ(ulp_distance(NAN, 1.0, DType::f32), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ulp_distance(5.0, 2.0, DType::i32), 3);
}

TEST(ErrorMetrics, PsnrMaxAbsAndRelativeWithFloor) {
  Tensor ref = Tensor::from_vector({4.0, -2.0, 0.0, 1.0}, {4}, DType::f64);
  Tensor act = Tensor::from_vector({4.0, -2.5, 0.001, 1.0}, {4}, DType::f64);
  const ErrorStats s = compare_to_reference(act, ref);
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(s.peak, 4.0);
  EXPECT_DOUBLE_EQ(s.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(s.rel_floor, 4e-3);
  EXPECT_DOUBLE_EQ(s.max_rel, 0.25);   // 0.5 / 2; the 0.001 / max(0, floor) term is 0.25 too
  const double mse = (0.25 + 1e-6) / 4;
  EXPECT_NEAR(s.psnr_db, 10 * std::log10(16 / mse), 1e-9);
  EXPECT_FALSE(s.exact);
}

TEST(ErrorMetrics, ExactMeansEqualToTheReferenceRoundedOnce) {
  Tensor ref = Tensor::from_vector({1.0 / 3, 2.0 / 3, 10.0}, {3}, DType::f64);
  const ErrorStats s = compare_to_reference(ref.to(DType::bf16), ref);
  EXPECT_TRUE(s.exact);
  EXPECT_EQ(s.max_ulp, 0);
  EXPECT_GT(s.max_abs, 0.0);   // rounding error is measured, but it is not a mistake
  Tensor off = Tensor::from_vector({1.0 / 3 + 0.01, 2.0 / 3, 10.0}, {3}, DType::bf16);
  EXPECT_FALSE(compare_to_reference(off, ref).exact);
  EXPECT_GE(compare_to_reference(off, ref).max_ulp, 1);
  EXPECT_TRUE(std::isinf(compare_to_reference(ref, ref).psnr_db));
}

TEST(ErrorMetrics, NanMismatchesAreCountedAndPoisonPsnr) {
  Tensor ref = Tensor::from_vector({1.0, NAN, 3.0}, {3}, DType::f64);
  Tensor act = Tensor::from_vector({NAN, NAN, 3.0}, {3}, DType::f32);
  const ErrorStats s = compare_to_reference(act, ref);
  EXPECT_EQ(s.nan_mismatches, 1);
  EXPECT_TRUE(std::isnan(s.psnr_db));
  EXPECT_FALSE(s.exact);
}

TEST(ErrorMetrics, ComplexComparesBothParts) {
  Tensor ref = Tensor::from_complex_vector({{1, 2}, {3, 4}}, {2});
  Tensor act = Tensor::from_complex_vector({{1, 2}, {3, 4.5}}, {2});
  const ErrorStats s = compare_to_reference(act, ref);
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(s.max_abs, 0.5);
}

TEST(ErrorMetrics, KlDivergenceOfKnownDistributions) {
  // p = (1/2, 1/2), q = (1/4, 3/4): KL = 1/2 ln 2 + 1/2 ln(2/3).
  Tensor p = Tensor::from_vector({0.0, 0.0}, {1, 2}, DType::f64);
  Tensor q = Tensor::from_vector({0.0, std::log(3.0)}, {1, 2}, DType::f32);
  EXPECT_NEAR(mean_kl_divergence(p, q), 0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0), 1e-7);
  EXPECT_EQ(mean_kl_divergence(p, p), 0.0);
  // Shifting logits changes nothing; a row of -inf mass (p_i = 0) contributes nothing.
  Tensor shifted = Tensor::from_vector({100.0, 100.0 + std::log(3.0)}, {1, 2}, DType::f64);
  EXPECT_NEAR(mean_kl_divergence(p, shifted), mean_kl_divergence(p, q), 1e-7);
  Tensor with_zero = Tensor::from_vector({0.0, -INFINITY, 0.0, 0.0}, {2, 2}, DType::f64);
  Tensor cand = Tensor::from_vector({0.0, 5.0, 0.0, 0.0}, {2, 2}, DType::f64);
  EXPECT_NEAR(mean_kl_divergence(with_zero, cand), 0.5 * (0.0 - (0.0 - std::log(1.0 + std::exp(5.0)))), 1e-12);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { mean_kl_divergence(p, with_zero); }, {"mean_kl_divergence", "logits"}));
}

TEST(ErrorMetrics, TopOneAgreement) {
  Tensor ref = Tensor::from_vector({1, 2, 3, 3, 2, 1, 0, 5, 0, 1, 1, 0}, {4, 3}, DType::f64);
  Tensor cand = Tensor::from_vector({1, 2, 4, 1, 2, 3, 0, 5, 0, 1, 1, 0}, {4, 3}, DType::bf16);
  EXPECT_DOUBLE_EQ(top1_agreement_percent(ref, cand), 75.0);   // row 1 differs; row 3 ties pick index 0 on both
  EXPECT_DOUBLE_EQ(top1_agreement_percent(ref, ref), 100.0);
}

}  // namespace
}  // namespace fourfold
