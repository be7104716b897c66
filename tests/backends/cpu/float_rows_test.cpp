// The drivers' row conversions (backends/cpu/float_rows.h) against the scalar conversions of dtype.h: every
// bf16 and f16 bit pattern widens exactly, narrowing rounds once to nearest even (ties, NaN, inf, subnormals,
// overflow), strided rows read and write only their own elements.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/float_rows.h"

namespace fourfold::cpu {
namespace {

// The dtype as a template argument: with it constant, GCC sees the f32 case cannot read these 16-bit buffers.
template <DType T>
void widen_every_pattern() {
  std::vector<uint16_t> bits(65536);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);
  std::vector<float> out(bits.size());
  widen_row(T, bits.data(), 1, static_cast<int64_t>(bits.size()), out.data());
  for (size_t i = 0; i < bits.size(); ++i) {
    const float want = T == DType::bf16 ? bf16_to_f32(bits[i]) : f16_to_f32(bits[i]);
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(out[i])) << dtype_name(T) << " " << i;
    else EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(want)) << dtype_name(T) << " " << i;
  }
}

TEST(FloatRows, WidenEveryBf16AndF16PatternExactly) {
  widen_every_pattern<DType::bf16>();
  widen_every_pattern<DType::f16>();
}

template <DType T>
void narrow_rounds_once() {
  const float inf = std::numeric_limits<float>::infinity();
  // 1 + 2^-8 is a bf16 tie (rounds to 1), 1 + 3 * 2^-8 rounds up to 1 + 2^-6; 1 + 2^-11 an f16 tie; 70000
  // overflows f16; a bf16 subnormal; NaN stays NaN.
  const std::vector<float> x{1.0f + 0x1p-8f, 1.0f + 0x1p-8f * 3, 1.0f + 0x1p-11f, -0.0f, 70000.0f, 0x1p-130f,
                             -inf, std::numeric_limits<float>::quiet_NaN(), 3.14159f};
  std::vector<uint16_t> out(x.size());
  narrow_row(T, x.data(), 1.0f, static_cast<int64_t>(x.size()), out.data(), 1);
  for (size_t i = 0; i < x.size(); ++i) {
    const uint16_t want = T == DType::bf16 ? f32_to_bf16(x[i]) : f32_to_f16(x[i]);
    const float got = T == DType::bf16 ? bf16_to_f32(out[i]) : f16_to_f32(out[i]);
    if (std::isnan(x[i])) EXPECT_TRUE(std::isnan(got)) << dtype_name(T);
    else EXPECT_EQ(out[i], want) << dtype_name(T) << " " << x[i];
  }
}

TEST(FloatRows, NarrowRoundsOnceToNearestEven) {
  narrow_rounds_once<DType::bf16>();
  narrow_rounds_once<DType::f16>();
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f), f32_to_bf16(1.0f));               // the tie went to even
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.0f + 0x1p-8f * 3)), 1.0f + 0x1p-6f);  // and the other way
}

// The factor multiplies in f32 before the one rounding: 3 * (1/3) rounds as f32 first.
TEST(FloatRows, NarrowAppliesTheFactorInF32) {
  const std::vector<float> x{3.0f, 1.5f, -6.0f};
  std::vector<float> out(x.size());
  narrow_row(DType::f32, x.data(), 1.0f / 3.0f, 3, out.data(), 1);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(out[i], x[i] * (1.0f / 3.0f));
}

// Strided rows: every step-th element, the ones between untouched.
TEST(FloatRows, StridedRowsTouchOnlyTheirElements) {
  const std::vector<uint16_t> src{f32_to_bf16(1.0f), 0xFFFF, f32_to_bf16(-2.5f), 0xFFFF, f32_to_bf16(0.75f)};
  std::vector<float> wide(3);
  widen_row(DType::bf16, src.data(), 2, 3, wide.data());
  EXPECT_EQ(wide, (std::vector<float>{1.0f, -2.5f, 0.75f}));
  std::vector<float> dst(7, 99.0f);
  narrow_row(DType::f32, wide.data(), 2.0f, 3, dst.data(), 3);
  EXPECT_EQ(dst, (std::vector<float>{2.0f, 99.0f, 99.0f, -5.0f, 99.0f, 99.0f, 1.5f}));
}

}  // namespace
}  // namespace fourfold::cpu
