// Numeric formats: exhaustive FP8 decoding, f16/bf16 round trips, rounding, and PyTorch's FP8 overflow rules.
#include <bit>
#include <cmath>
#include <limits>

#include "core/minifloat.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

// Independent decoders written from the format definitions, used to check the production tables.
double decode_e4m3fn(uint8_t b) {
  const int s = b >> 7, e = (b >> 3) & 0xF, m = b & 7;
  if (e == 15 && m == 7) return NAN;
  const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return s ? -mag : mag;
}

double decode_e5m2(uint8_t b) {
  const int s = b >> 7, e = (b >> 2) & 0x1F, m = b & 3;
  double mag;
  if (e == 31) mag = m == 0 ? INFINITY : NAN;
  else if (e == 0) mag = std::ldexp(m, -16);
  else mag = std::ldexp(4 + m, e - 17);
  return s ? -mag : mag;
}

void expect_same(double a, double b, int bits) {
  if (std::isnan(b)) EXPECT_TRUE(std::isnan(a)) << "bits " << bits;
  else EXPECT_EQ(a, b) << "bits " << bits;
}

TEST(DType, AllFp8E4m3fnValuesDecode) {
  for (int b = 0; b < 256; ++b) expect_same(fp8_e4m3fn_to_f32(static_cast<uint8_t>(b)), decode_e4m3fn(b), b);
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x7E), 448.0f);
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x01), std::ldexp(1.0f, -9));   // smallest subnormal
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x08), std::ldexp(1.0f, -6));   // smallest normal
}

TEST(DType, AllFp8E5m2ValuesDecode) {
  for (int b = 0; b < 256; ++b) expect_same(fp8_e5m2_to_f32(static_cast<uint8_t>(b)), decode_e5m2(b), b);
  EXPECT_EQ(fp8_e5m2_to_f32(0x7B), 57344.0f);
  EXPECT_TRUE(std::isinf(fp8_e5m2_to_f32(0x7C)));
}

TEST(DType, EveryFp8ValueRoundTripsThroughDouble) {
  for (int b = 0; b < 256; ++b) {
    const double v4 = fp8_e4m3fn_to_f32(static_cast<uint8_t>(b));
    if (!std::isnan(v4)) EXPECT_EQ(f64_to_fp8_e4m3fn(v4), b);
    const double v5 = fp8_e5m2_to_f32(static_cast<uint8_t>(b));
    if (!std::isnan(v5)) EXPECT_EQ(f64_to_fp8_e5m2(v5), b);
  }
}

TEST(DType, E4m3fnOverflowFollowsPyTorch) {
  EXPECT_EQ(fp8_e4m3fn_to_f32(f64_to_fp8_e4m3fn(448.0)), 448.0f);
  EXPECT_EQ(fp8_e4m3fn_to_f32(f64_to_fp8_e4m3fn(464.0)), 448.0f);   // the tie rounds to even (448)
  EXPECT_EQ(fp8_e4m3fn_to_f32(f64_to_fp8_e4m3fn(465.0)), 448.0f);   // finite overflow saturates
  EXPECT_EQ(fp8_e4m3fn_to_f32(f64_to_fp8_e4m3fn(480.0)), 448.0f);
  EXPECT_EQ(fp8_e4m3fn_to_f32(f64_to_fp8_e4m3fn(-1e6)), -448.0f);
  EXPECT_TRUE(std::isnan(fp8_e4m3fn_to_f32(f64_to_fp8_e4m3fn(INFINITY))));   // no infinity in the format
  EXPECT_EQ(f64_to_fp8_e4m3fn(-INFINITY), 0xFF);
  EXPECT_TRUE(std::isnan(fp8_e4m3fn_to_f32(f64_to_fp8_e4m3fn(NAN))));
}

TEST(DType, E5m2KeepsInfinities) {
  EXPECT_EQ(fp8_e5m2_to_f32(f64_to_fp8_e5m2(57344.0)), 57344.0f);
  EXPECT_EQ(fp8_e5m2_to_f32(f64_to_fp8_e5m2(61439.0)), 57344.0f);   // below the midpoint
  EXPECT_TRUE(std::isinf(fp8_e5m2_to_f32(f64_to_fp8_e5m2(61440.0))));   // tie rounds up to even = inf
  EXPECT_TRUE(std::isinf(fp8_e5m2_to_f32(f64_to_fp8_e5m2(INFINITY))));
  EXPECT_TRUE(std::isnan(fp8_e5m2_to_f32(f64_to_fp8_e5m2(NAN))));
}

TEST(DType, Fp8SubnormalsRoundToNearestEven) {
  const double q = std::ldexp(1.0, -9);   // e4m3fn subnormal step
  EXPECT_EQ(f64_to_fp8_e4m3fn(0.5 * q), 0x00);   // tie to even (0)
  EXPECT_EQ(f64_to_fp8_e4m3fn(1.5 * q), 0x02);   // tie to even (2)
  EXPECT_EQ(f64_to_fp8_e4m3fn(0.51 * q), 0x01);
  EXPECT_EQ(f64_to_fp8_e4m3fn(7.5 * q), 0x08);   // rounds up into the smallest normal
}

TEST(DType, QuantizeSaturatesIncludingInfinity) {
  EXPECT_EQ(fp8_e4m3fn_to_f32(quantize_fp8(1000.0, 1.0, DType::f8_e4m3fn)), 448.0f);
  EXPECT_EQ(fp8_e4m3fn_to_f32(quantize_fp8(INFINITY, 1.0, DType::f8_e4m3fn)), 448.0f);
  EXPECT_EQ(fp8_e5m2_to_f32(quantize_fp8(-INFINITY, 2.0, DType::f8_e5m2)), -57344.0f);
  EXPECT_EQ(fp8_e4m3fn_to_f32(quantize_fp8(10.0, 2.0, DType::f8_e4m3fn)), 5.0f);
  EXPECT_TRUE(std::isnan(fp8_e4m3fn_to_f32(quantize_fp8(NAN, 1.0, DType::f8_e4m3fn))));
}

TEST(DType, AllF16BitPatternsRoundTripThroughF32) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = f16_to_f32(static_cast<uint16_t>(b));
    expect_same(f, minifloat_to_double(b, kF16Format), static_cast<int>(b));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << b;
    } else {
      ASSERT_EQ(f32_to_f16(f), b) << b;
    }
  }
}

TEST(DType, AllBf16BitPatternsRoundTripThroughF32) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = bf16_to_f32(static_cast<uint16_t>(b));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f)))) << b;
      EXPECT_TRUE(std::isnan(bf16_to_f32(f64_to_bf16(f)))) << b;
    } else {
      ASSERT_EQ(f32_to_bf16(f), b) << b;
      ASSERT_EQ(f64_to_bf16(f), b) << b;
    }
  }
}

TEST(DType, FastBf16RoundingAgreesWithTheGeneralRounding) {
  // Every f32 whose low 16 bits hit the interesting cases: exact ties, just below and above, for many exponents.
  for (uint32_t hi = 0; hi < 65536; hi += 7) {
    for (uint32_t lo : {0x0000u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      const float f = std::bit_cast<float>((hi << 16) | lo);
      if (std::isnan(f)) continue;
      ASSERT_EQ(f32_to_bf16(f), f64_to_bf16(f)) << std::hex << ((hi << 16) | lo);
    }
  }
}

TEST(DType, F16RoundingTiesSubnormalsAndOverflow) {
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7C00);   // tie to even overflows to inf
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);   // tie to even
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);   // tie to even
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);   // tie to even
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
}

TEST(DType, NamesPromotionAndErrors) {
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_dtype("fp8"), DType::f8_e4m3fn);
  EXPECT_EQ(dtype_name(DType::f8_e5m2), "float8_e5m2");
  EXPECT_EQ(promote_types(DType::bf16, DType::f16), DType::f32);
  EXPECT_EQ(promote_types(DType::bf16, DType::f32), DType::f32);
  EXPECT_EQ(promote_types(DType::i32, DType::bf16), DType::bf16);
  EXPECT_EQ(promote_types(DType::f32, DType::complex64), DType::complex64);
  EXPECT_EQ(promote_types(DType::boolean, DType::i64), DType::i64);
  EXPECT_TRUE(testing::throws_with<DTypeError>([] { parse_dtype("float7"); }, {"dtype", "'float7'", "bfloat16"}));
}

TEST(DType, IntegerStoresArePinned) {
  int32_t v;
  store_from_double(DType::i32, &v, -2.7);
  EXPECT_EQ(v, -2);   // truncation toward zero, as a C cast
  store_from_double(DType::i32, &v, 1e20);
  EXPECT_EQ(v, std::numeric_limits<int32_t>::max());
  store_from_double(DType::i32, &v, NAN);
  EXPECT_EQ(v, 0);
}

// e2m1: the 16 values, round to nearest even between them (ties at the midpoints go to the even code), saturation.
TEST(DType, Fp4E2m1DecodesAndRoundsToNearestEven) {
  const double values[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
  for (uint8_t c = 0; c < 16; ++c) {
    const double v = (c & 8 ? -1.0 : 1.0) * values[c & 7];
    EXPECT_EQ(fp4_e2m1_to_f32(c), static_cast<float>(v));
    EXPECT_EQ(std::signbit(fp4_e2m1_to_f32(c)), (c & 8) != 0);
    EXPECT_EQ(f64_to_fp4_e2m1(v), c) << int(c);
  }
  const std::pair<double, double> ties[] = {{0.25, 0.0}, {0.75, 1.0}, {1.25, 1.0}, {1.75, 2.0},
                                            {2.5, 2.0},  {3.5, 4.0},  {5.0, 4.0},  {0.26, 0.5},
                                            {100.0, 6.0}, {-0.3, -0.5}, {-7.0, -6.0}};
  for (auto [in, want] : ties) EXPECT_EQ(fp4_e2m1_to_f32(f64_to_fp4_e2m1(in)), static_cast<float>(want)) << in;
  EXPECT_EQ(quantize_fp4(9.0, 0.5), f64_to_fp4_e2m1(6.0));   // 18 saturates
}

TEST(DType, E8m0IsAPowerOfTwoWithNaNAt255) {
  for (int e = -127; e <= 127; ++e) {
    const uint8_t code = f64_to_fp8_e8m0fnu(std::ldexp(1.0, e));
    EXPECT_EQ(code, e + 127);
    EXPECT_EQ(fp8_e8m0fnu_to_f32(code), std::ldexp(1.0f, e));
  }
  EXPECT_TRUE(std::isnan(fp8_e8m0fnu_to_f32(0xFF)));
  EXPECT_EQ(fp8_e8m0fnu_to_f32(f64_to_fp8_e8m0fnu(1.4)), 1.0f);
  EXPECT_EQ(fp8_e8m0fnu_to_f32(f64_to_fp8_e8m0fnu(1.5)), 2.0f);   // a tie by value goes up
  EXPECT_EQ(f64_to_fp8_e8m0fnu(0.0), 0xFF);
  EXPECT_EQ(f64_to_fp8_e8m0fnu(-2.0), 0xFF);
  EXPECT_EQ(f64_to_fp8_e8m0fnu(1e300), 0xFE);
}

TEST(DType, PackedFp4HasNoSingleValueAndViewsAsBytes) {
  EXPECT_EQ(dtype_size(DType::f4_e2m1fn_x2), 1u);
  EXPECT_EQ(parse_dtype("float4_e2m1fn_x2"), DType::f4_e2m1fn_x2);
  EXPECT_EQ(parse_dtype("float8_e8m0fnu"), DType::f8_e8m0fnu);
  const uint8_t pair = 0x9A;   // low nibble 0xA (-1.0), high 0x9 (-0.5)
  EXPECT_EQ(fp4_pair_value(&pair, 0), -1.0);
  EXPECT_EQ(fp4_pair_value(&pair, 1), -0.5);
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { load_as_double(DType::f4_e2m1fn_x2, &pair); },
                                               {"load_as_double", "float4_e2m1fn_x2"}));
  Tensor bytes = Tensor::zeros({2, 3}, DType::u8);
  static_cast<uint8_t*>(bytes.data())[4] = 0x21;
  const Tensor codes = bytes.view_dtype(DType::f4_e2m1fn_x2);
  EXPECT_EQ(codes.dtype(), DType::f4_e2m1fn_x2);
  EXPECT_EQ(codes.data(), bytes.data());
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { bytes.view_dtype(DType::bf16); }, {"view_dtype", "bfloat16"}));
}

}  // namespace
}  // namespace fourfold
