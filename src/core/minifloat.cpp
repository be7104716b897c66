#include "core/minifloat.h"

#include <cmath>

namespace fourfold {
namespace {

struct Layout {
  int total_bits, bias, max_exponent_field;
  uint32_t mantissa_mask, nan_bits, inf_bits, max_finite_bits;
};

Layout layout_of(const MinifloatFormat& f) {
  Layout l{};
  l.total_bits = 1 + f.exponent_bits + f.mantissa_bits;
  l.bias = (1 << (f.exponent_bits - 1)) - 1;
  l.mantissa_mask = (1u << f.mantissa_bits) - 1;
  const uint32_t exp_all_ones = (1u << f.exponent_bits) - 1;
  if (f.has_infinity) {
    l.max_exponent_field = static_cast<int>(exp_all_ones) - 1;
    l.inf_bits = exp_all_ones << f.mantissa_bits;
    l.nan_bits = l.inf_bits | (1u << (f.mantissa_bits - 1));     // quiet NaN
    l.max_finite_bits = (static_cast<uint32_t>(l.max_exponent_field) << f.mantissa_bits) | l.mantissa_mask;
  } else {
    l.max_exponent_field = static_cast<int>(exp_all_ones);
    l.nan_bits = (exp_all_ones << f.mantissa_bits) | l.mantissa_mask;
    l.inf_bits = l.nan_bits;
    l.max_finite_bits = l.nan_bits - 1;
  }
  return l;
}

}  // namespace

uint32_t round_to_minifloat(double value, const MinifloatFormat& f) {
  const Layout l = layout_of(f);
  const uint32_t sign = std::signbit(value) ? (1u << (l.total_bits - 1)) : 0u;
  if (std::isnan(value)) return sign | l.nan_bits;
  const double a = std::fabs(value);
  if (std::isinf(a)) return sign | l.inf_bits;   // e4m3fn: NaN (no infinity to keep)
  if (a == 0.0) return sign;

  int e2 = 0;
  std::frexp(a, &e2);                  // a = m * 2^e2, m in [0.5, 1)
  int exponent = e2 - 1;               // a = 1.f * 2^exponent
  const int min_normal_exponent = 1 - l.bias;
  if (exponent < min_normal_exponent) exponent = min_normal_exponent;   // subnormal: fixed quantum
  // Quantum (value of one mantissa step) is a power of two, so a / quantum is exact in double and
  // nearbyint (default rounding mode) rounds it to nearest even.
  const double steps = std::nearbyint(std::ldexp(a, f.mantissa_bits - exponent));
  uint64_t n = static_cast<uint64_t>(steps);
  int exponent_field;
  if (n < (1ull << f.mantissa_bits)) {
    exponent_field = 0;                // stayed subnormal
  } else {
    if (n == (2ull << f.mantissa_bits)) {   // rounding carried into the next binade
      n >>= 1;
      ++exponent;
    }
    exponent_field = exponent + l.bias;
  }
  const uint32_t bits = (static_cast<uint32_t>(exponent_field) << f.mantissa_bits) |
                        (static_cast<uint32_t>(n) & l.mantissa_mask);
  const bool overflow = exponent_field > l.max_exponent_field || (!f.has_infinity && bits > l.max_finite_bits);
  if (overflow) return sign | (f.saturate_finite ? l.max_finite_bits : l.inf_bits);
  return sign | bits;
}

double minifloat_to_double(uint32_t bits, const MinifloatFormat& f) {
  const Layout l = layout_of(f);
  const bool negative = (bits >> (l.total_bits - 1)) & 1u;
  const uint32_t magnitude = bits & ((1u << (l.total_bits - 1)) - 1);
  const int exponent_field = static_cast<int>(magnitude >> f.mantissa_bits);
  const uint32_t mantissa = magnitude & l.mantissa_mask;
  double v;
  if (f.has_infinity && exponent_field == l.max_exponent_field + 1) {
    v = mantissa == 0 ? INFINITY : NAN;
  } else if (!f.has_infinity && magnitude == l.nan_bits) {
    v = NAN;
  } else if (exponent_field == 0) {
    v = std::ldexp(static_cast<double>(mantissa), 1 - l.bias - f.mantissa_bits);
  } else {
    v = std::ldexp(static_cast<double>(mantissa | (1u << f.mantissa_bits)), exponent_field - l.bias - f.mantissa_bits);
  }
  return negative ? -v : v;
}

}  // namespace fourfold
