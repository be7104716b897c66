// DType names, sizes, promotion and the scalar conversions.
#include "fourfold/dtype.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/minifloat.h"
#include "fourfold/errors.h"

namespace fourfold {
namespace {

struct DTypeInfo {
  DType dtype;
  size_t size;
  const char* name;
  const char* short_name;
};

constexpr std::array<DTypeInfo, kDTypeCount> kInfo = {{
    {DType::f32, 4, "float32", "f32"},
    {DType::f16, 2, "float16", "f16"},
    {DType::bf16, 2, "bfloat16", "bf16"},
    {DType::f8_e4m3fn, 1, "float8_e4m3fn", "fp8"},
    {DType::f8_e5m2, 1, "float8_e5m2", "e5m2"},
    {DType::complex64, 8, "complex64", "c64"},
    {DType::i32, 4, "int32", "i32"},
    {DType::i64, 8, "int64", "i64"},
    {DType::boolean, 1, "bool", "bool"},
    {DType::f64, 8, "float64", "f64"},
    {DType::u8, 1, "uint8", "u8"},
    {DType::f4_e2m1fn_x2, 1, "float4_e2m1fn_x2", "fp4x2"},
    {DType::f8_e8m0fnu, 1, "float8_e8m0fnu", "e8m0"},
}};

const DTypeInfo& info(DType d) { return kInfo[static_cast<size_t>(d)]; }

// Decoding tables: 256 entries per FP8 format, built once from the one definition in minifloat.cpp.
struct Fp8Tables {
  std::array<float, 256> e4m3fn, e5m2;
  Fp8Tables() {
    for (uint32_t b = 0; b < 256; ++b) {
      e4m3fn[b] = static_cast<float>(minifloat_to_double(b, kE4m3fnFormat));
      e5m2[b] = static_cast<float>(minifloat_to_double(b, kE5m2Format));
    }
  }
};
const Fp8Tables& fp8_tables() {
  static const Fp8Tables tables;
  return tables;
}

}  // namespace

size_t dtype_size(DType d) { return info(d).size; }
std::string_view dtype_name(DType d) { return info(d).name; }

DType parse_dtype(std::string_view name) {
  for (const DTypeInfo& i : kInfo)
    if (name == i.name || name == i.short_name) return i.dtype;
  if (name == "fp8_e4m3fn" || name == "e4m3fn" || name == "e4m3") return DType::f8_e4m3fn;
  if (name == "fp8_e5m2") return DType::f8_e5m2;
  if (name == "float" ) return DType::f32;
  if (name == "half") return DType::f16;
  std::string valid;
  for (const DTypeInfo& i : kInfo) valid += fmt::format("{}{} ({})", valid.empty() ? "" : ", ", i.name, i.short_name);
  fail<DTypeError>("dtype", "name", "one of " + valid, fmt::format("'{}'", name));
}

bool is_fp8(DType d) { return d == DType::f8_e4m3fn || d == DType::f8_e5m2; }
bool is_floating(DType d) {
  return d == DType::f32 || d == DType::f16 || d == DType::bf16 || d == DType::f64 || is_fp8(d);
}
bool is_complex(DType d) { return d == DType::complex64; }
bool is_integral(DType d) { return d == DType::i32 || d == DType::i64 || d == DType::u8 || d == DType::boolean; }
bool is_fp4(DType d) { return d == DType::f4_e2m1fn_x2; }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_complex(a) || is_complex(b)) return DType::complex64;
  if (a == DType::f64 || b == DType::f64) return DType::f64;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (fa && fb) {
    // Two different floating types: f32 when either is f32; otherwise (f16/bf16/fp8 mixtures) PyTorch also
    // lands on f32 except when one side is an FP8 and the other f16/bf16, where it keeps the wider one.
    if (a == DType::f32 || b == DType::f32) return DType::f32;
    if (is_fp8(a) && !is_fp8(b)) return b;
    if (is_fp8(b) && !is_fp8(a)) return a;
    return DType::f32;
  }
  // Integers and bool: the wider integer.
  if (a == DType::i64 || b == DType::i64) return DType::i64;
  return DType::i32;
}

float f16_to_f32(uint16_t bits) {
  // Exact: every f16 is a float. Shift the fields into place; subnormals renormalised by a float multiply.
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  uint32_t out;
  if (exponent == 0x1F) {
    out = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else {
    const float v = static_cast<float>(mantissa) * 0x1p-24f;   // exact: mantissa < 2^10
    out = sign | std::bit_cast<uint32_t>(v);
  }
  return std::bit_cast<float>(out);
}

uint16_t f32_to_f16(float value) { return static_cast<uint16_t>(round_to_minifloat(value, kF16Format)); }
uint16_t f64_to_f16(double value) { return static_cast<uint16_t>(round_to_minifloat(value, kF16Format)); }

uint16_t f64_to_bf16(double value) { return static_cast<uint16_t>(round_to_minifloat(value, kBf16Format)); }

float fp8_e4m3fn_to_f32(uint8_t bits) { return fp8_tables().e4m3fn[bits]; }
float fp8_e5m2_to_f32(uint8_t bits) { return fp8_tables().e5m2[bits]; }
uint8_t f64_to_fp8_e4m3fn(double value) { return static_cast<uint8_t>(round_to_minifloat(value, kE4m3fnFormat)); }
uint8_t f64_to_fp8_e5m2(double value) { return static_cast<uint8_t>(round_to_minifloat(value, kE5m2Format)); }

double fp8_max(DType d) {
  if (d == DType::f8_e4m3fn) return kFp8E4m3fnMax;
  if (d == DType::f8_e5m2) return kFp8E5m2Max;
  fail<DTypeError>("fp8_max", "dtype", "float8_e4m3fn or float8_e5m2", std::string(dtype_name(d)));
}

uint8_t quantize_fp8(double value, double scale, DType d) {
  const double max = fp8_max(d);
  double q = value / scale;
  if (!std::isnan(q)) q = std::fmin(std::fmax(q, -max), max);
  return d == DType::f8_e4m3fn ? f64_to_fp8_e4m3fn(q) : f64_to_fp8_e5m2(q);
}

float fp4_e2m1_to_f32(uint8_t nibble) {
  static constexpr float kValues[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                        -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  return kValues[nibble & 0xF];
}

uint8_t f64_to_fp4_e2m1(double value) {
  if (std::isnan(value)) return 0;
  const uint8_t sign = std::signbit(value) ? 8 : 0;
  const double a = std::fabs(value);
  // The magnitudes in code order; a value between two of them goes to the nearer, a tie to the even code.
  static constexpr double kMagnitudes[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
  uint8_t code = 7;
  for (uint8_t c = 0; c < 7; ++c) {
    const double mid = (kMagnitudes[c] + kMagnitudes[c + 1]) / 2;
    if (a < mid || (a == mid && c % 2 == 0)) {
      code = c;
      break;
    }
  }
  return static_cast<uint8_t>(sign | code);
}

uint8_t quantize_fp4(double value, double scale) {
  double q = value / scale;
  if (!std::isnan(q)) q = std::fmin(std::fmax(q, -kFp4E2m1Max), kFp4E2m1Max);
  return f64_to_fp4_e2m1(q);
}

float fp8_e8m0fnu_to_f32(uint8_t bits) {
  if (bits == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);   // 2^-127 is an f32 subnormal: exact
}

uint8_t f64_to_fp8_e8m0fnu(double value) {
  if (!(value > 0.0)) return 0xFF;
  int e = 0;
  const double m = std::frexp(value, &e);   // value = m * 2^e, m in [0.5, 1)
  int exponent = e - 1 + (m >= 0.75 ? 1 : 0);   // the nearer of 2^(e-1) and 2^e by value, a tie (1.5 * 2^(e-1)) up
  exponent = std::clamp(exponent, -127, 127);
  return static_cast<uint8_t>(exponent + 127);
}

double load_as_double(DType d, const void* p) {
  switch (d) {
    case DType::f32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::f64: { double v; std::memcpy(&v, p, 8); return v; }
    case DType::f16: { uint16_t v; std::memcpy(&v, p, 2); return f16_to_f32(v); }
    case DType::bf16: { uint16_t v; std::memcpy(&v, p, 2); return bf16_to_f32(v); }
    case DType::f8_e4m3fn: return fp8_e4m3fn_to_f32(*static_cast<const uint8_t*>(p));
    case DType::f8_e5m2: return fp8_e5m2_to_f32(*static_cast<const uint8_t*>(p));
    case DType::complex64: { float v[2]; std::memcpy(v, p, 8); return v[0]; }
    case DType::i32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::i64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::boolean: return *static_cast<const uint8_t*>(p) != 0 ? 1.0 : 0.0;
    case DType::u8: return *static_cast<const uint8_t*>(p);
    case DType::f8_e8m0fnu: return fp8_e8m0fnu_to_f32(*static_cast<const uint8_t*>(p));
    case DType::f4_e2m1fn_x2: break;
  }
  fail<DTypeError>("load_as_double", "dtype", "a type with one value per element (use fp4_pair_value)",
                   std::string(dtype_name(d)));
}

namespace {
// Float to integer as PyTorch's CPU casts do for in-range values (truncation toward zero); NaN and
// out-of-range values are undefined in C++, so they are pinned here: NaN -> 0, others clamp.
template <class I>
I to_integer(double v) {
  if (std::isnan(v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (v <= lo) return std::numeric_limits<I>::min();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}
}  // namespace

void store_from_double(DType d, void* p, double v) {
  switch (d) {
    case DType::f32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); return; }
    case DType::f64: std::memcpy(p, &v, 8); return;
    case DType::f16: { uint16_t h = f64_to_f16(v); std::memcpy(p, &h, 2); return; }
    case DType::bf16: { uint16_t h = f64_to_bf16(v); std::memcpy(p, &h, 2); return; }
    case DType::f8_e4m3fn: *static_cast<uint8_t*>(p) = f64_to_fp8_e4m3fn(v); return;
    case DType::f8_e5m2: *static_cast<uint8_t*>(p) = f64_to_fp8_e5m2(v); return;
    case DType::complex64: { float c[2] = {static_cast<float>(v), 0.0f}; std::memcpy(p, c, 8); return; }
    case DType::i32: { int32_t i = to_integer<int32_t>(v); std::memcpy(p, &i, 4); return; }
    case DType::i64: { int64_t i = to_integer<int64_t>(v); std::memcpy(p, &i, 8); return; }
    case DType::boolean: *static_cast<uint8_t*>(p) = v != 0.0 ? 1 : 0; return;
    case DType::u8: *static_cast<uint8_t*>(p) = to_integer<uint8_t>(v); return;
    case DType::f8_e8m0fnu: *static_cast<uint8_t*>(p) = f64_to_fp8_e8m0fnu(v); return;
    case DType::f4_e2m1fn_x2: break;
  }
  fail<DTypeError>("store_from_double", "dtype", "a type with one value per element", std::string(dtype_name(d)));
}

std::complex<double> load_as_complex(DType d, const void* p) {
  if (d == DType::complex64) {
    float v[2];
    std::memcpy(v, p, 8);
    return {v[0], v[1]};
  }
  return {load_as_double(d, p), 0.0};
}

void store_from_complex(DType d, void* p, std::complex<double> v) {
  if (d == DType::complex64) {
    float c[2] = {static_cast<float>(v.real()), static_cast<float>(v.imag())};
    std::memcpy(p, c, 8);
    return;
  }
  store_from_double(d, p, v.real());   // as PyTorch's complex -> real cast: the imaginary part is dropped
}

}  // namespace fourfold
