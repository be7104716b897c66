// One rounding from double into any small binary float format (f16, bf16, FP8): the single definition of
// round-to-nearest-even, subnormals and overflow that every narrow conversion in fourfold is tested against.
#pragma once

#include <cstdint>

namespace fourfold {

struct MinifloatFormat {
  int exponent_bits;
  int mantissa_bits;
  bool has_infinity;        // IEEE-like: exponent all ones is inf/NaN
  // Formats without infinity (e4m3fn): the top exponent holds normal values except mantissa all ones (NaN).
  bool saturate_finite;     // finite overflow gives +-max instead of inf/NaN
};

inline constexpr MinifloatFormat kF16Format{5, 10, true, false};
inline constexpr MinifloatFormat kBf16Format{8, 7, true, false};
inline constexpr MinifloatFormat kE4m3fnFormat{4, 3, false, true};
inline constexpr MinifloatFormat kE5m2Format{5, 2, true, false};

uint32_t round_to_minifloat(double value, const MinifloatFormat& format);   // bits, sign in the top bit
double minifloat_to_double(uint32_t bits, const MinifloatFormat& format);

}  // namespace fourfold
