// Element types, their sizes and names, and the scalar conversions every tier shares.
#pragma once

#include <bit>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace fourfold {

// f64 is not one of the product's storage types: it exists so that the float64 reference tier can hand
// back its results unrounded, which is what the correctness record compares against.
// u8, f4_e2m1fn_x2 and f8_e8m0fnu come after f64 so that the earlier values keep their numbers: they are the
// storage of FP4 checkpoints (packed codes, MX block scales) and of the raw bytes those are written as.
// f4_e2m1fn_x2 is PyTorch's torch.float4_e2m1fn_x2: one byte holds two e2m1 values, the element of even index in
// the low nibble (as compressed-tensors and gpt-oss pack them); its tensors have half the logical columns.
enum class DType : uint8_t {
  f32, f16, bf16, f8_e4m3fn, f8_e5m2, complex64, i32, i64, boolean, f64, u8, f4_e2m1fn_x2, f8_e8m0fnu
};

inline constexpr int kDTypeCount = 13;

size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);       // PyTorch's spelling: "float32", "bfloat16", "float8_e4m3fn", ...
DType parse_dtype(std::string_view name);       // accepts PyTorch's names and short ones ("f32", "bf16", "fp8"); throws DTypeError
bool is_floating(DType dtype);                  // real floating types, FP8 included
bool is_fp8(DType dtype);                       // e4m3fn and e5m2, the element types of FP8 weights
bool is_fp4(DType dtype);                       // float4_e2m1fn_x2
bool is_complex(DType dtype);
bool is_integral(DType dtype);                  // i32, i64, u8, bool
// PyTorch's type promotion restricted to fourfold's types (e.g. bf16 + f16 -> f32, f32 + complex64 -> complex64).
DType promote_types(DType a, DType b);

// ---- Bit-exact scalar conversions (round to nearest even, subnormals kept, inf and NaN handled) ----
float f16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);
// bf16 is f32's top half: inline, so that loops over rows of it vectorize.
inline float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
inline uint16_t f32_to_bf16(float value) {
  // Round to nearest even on the top 16 bits; NaN is kept quiet (a rounding carry could turn it into inf).
  const uint32_t u = std::bit_cast<uint32_t>(value);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
uint16_t f64_to_f16(double value);   // one rounding from double: no double rounding through f32
uint16_t f64_to_bf16(double value);

// FP8, following current PyTorch on CPU (after pytorch/pytorch#178817, April 2026):
//  e4m3fn has no infinity; its largest finite value is 448 and its NaN is S.1111.111.
//  A finite value whose rounded magnitude exceeds 448 saturates to +-448 (464 is a tie and rounds to 448
//  anyway; 465 and 480 saturate). That change is titled "saturate on finite-overflow": +-inf is not finite
//  and still becomes NaN (0x7F / 0xFF), as it did before, since the format has no infinity to keep.
//  NaN stays NaN. e5m2 is IEEE-like: overflow rounds to +-inf, infinities and NaN are kept.
float fp8_e4m3fn_to_f32(uint8_t bits);
float fp8_e5m2_to_f32(uint8_t bits);
uint8_t f64_to_fp8_e4m3fn(double value);
uint8_t f64_to_fp8_e5m2(double value);
inline constexpr double kFp8E4m3fnMax = 448.0;
inline constexpr double kFp8E5m2Max = 57344.0;
double fp8_max(DType dtype);   // 448 or 57344; DTypeError for other types

// Saturating quantization as weight quantization uses it: q = clamp(value / scale, -max, +max), then rounded
// to the format. Infinities saturate too (unlike a plain cast); NaN stays NaN.
uint8_t quantize_fp8(double value, double scale, DType fp8_dtype);

// FP4 e2m1 (1 sign, 2 exponent, 1 mantissa bits; no inf, no NaN): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
// Rounding to it is to nearest even, saturating at +-6 (there is nothing above); NaN has no code and gives +0,
// so quantize_fp4 refuses a NaN before it gets here.
float fp4_e2m1_to_f32(uint8_t nibble);           // the low 4 bits
uint8_t f64_to_fp4_e2m1(double value);
inline constexpr double kFp4E2m1Max = 6.0;
// The e2m1 code of value / scale, saturated (as quantize_fp8).
uint8_t quantize_fp4(double value, double scale);
// e8m0fnu, the MX block scale: 2^(bits - 127), bits 255 NaN; no zero, no sign. From a double: the nearest power
// of two by value (a tie, 1.5 * 2^e, up), clamped to [2^-127, 2^127]; zero, negatives and NaN give NaN.
float fp8_e8m0fnu_to_f32(uint8_t bits);
uint8_t f64_to_fp8_e8m0fnu(double value);

// Load one element of any type as double (complex: real part) and store a double into any type, rounding once.
// These are the slow, obviously-correct accessors the reference tier and the tests use. A float4_e2m1fn_x2
// element is two values, not one: both accessors refuse it (DTypeError); fp4_pair_value reads one of its halves.
double load_as_double(DType dtype, const void* element);
void store_from_double(DType dtype, void* element, double value);
std::complex<double> load_as_complex(DType dtype, const void* element);
// Value `half` (0: the low nibble, the element of even index; 1: the high one) of a packed e2m1 pair.
inline double fp4_pair_value(const void* element, int half) {
  return fp4_e2m1_to_f32(static_cast<uint8_t>(*static_cast<const uint8_t*>(element) >> (4 * half)));
}
void store_from_complex(DType dtype, void* element, std::complex<double> value);

}  // namespace fourfold
