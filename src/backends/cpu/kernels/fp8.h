// FP8 (e4m3fn, e5m2) codes converted in registers for the per-ISA kernel files that pack fp8 operands
// (gemm.cpp, into f32 panels; the GEMV streams its weights by cheaper routes of its own, gemv.cpp says which). Included only by kernel files, inside
// fourfold::cpu::<level>'s anonymous namespace, like vec.h: every definition here is per-ISA and internal.
//
// The conversion goes through f16, whose hardware conversion to f32 is exact for every f16 (subnormals
// included): an e5m2 code is the top byte of the f16 of the same value (inf and NaN included); an e4m3fn code
// with its magnitude shifted one bit right into an f16 is its value times 2^-8 (f16's exponent bias 15 =
// e4m3's 7 + 8), subnormals included, so the caller applies kE4m3Unit (2^8) with its scale. e4m3fn's NaN
// (S.1111.111) would come out as +-480 * 2^-8: with KeepNan the image of a NaN code is the f16 NaN 0xffff
// instead (the GEMM's packing); without it the caller tracks NaN codes itself (the GEMV, whose hot loop keeps
// a byte-wise max). Subnormals, +-max (448, 57344) and zeros come out exact.
#pragma once

#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "fourfold/dtype.h"   // f16_to_f32 for the scalar level

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

constexpr float kE4m3Unit = 256.0f;   // the factor an e4m3 code's f16 image is short of its value

// The f16 image of one code.
template <bool E4m3, bool KeepNan = false>
inline uint16_t fp8_f16_image(uint8_t code) {
  if constexpr (!E4m3) return static_cast<uint16_t>(code << 8);
  if (KeepNan && (code & 0x7f) == 0x7f) return 0xffff;
  // The sign-extended code shifted left 7, bit 14 (a sign copy) cleared.
  return static_cast<uint16_t>((static_cast<int8_t>(code) * 128) & 0xbfff);
}

// The image as f32 (e4m3: the value times 2^-8).
template <bool E4m3, bool KeepNan = false>
inline float fp8_image_f32(uint8_t code) {
#if defined(__AVX2__)
  return _cvtsh_ss(fp8_f16_image<E4m3, KeepNan>(code));
#else
  return f16_to_f32(fp8_f16_image<E4m3, KeepNan>(code));
#endif
}

#if defined(__AVX2__)
// The f16 images of the low 8 codes of `bytes`, as 8 x 16 bits.
template <bool E4m3, bool KeepNan = false>
inline __m128i fp8_f16_images8(__m128i bytes) {
  if constexpr (!E4m3) return _mm_slli_epi16(_mm_cvtepu8_epi16(bytes), 8);
  const __m128i wide = _mm_cvtepi8_epi16(bytes);
  const __m128i h = _mm_and_si128(_mm_slli_epi16(wide, 7), _mm_set1_epi16(static_cast<short>(0xbfff)));
  if constexpr (!KeepNan) return h;
  const __m128i magnitude = _mm_and_si128(wide, _mm_set1_epi16(0x7f));
  return _mm_or_si128(h, _mm_cmpeq_epi16(magnitude, _mm_set1_epi16(0x7f)));
}

// Eight codes from p as f32 images.
template <bool E4m3, bool KeepNan = false>
inline __m256 fp8_load8(const uint8_t* p) {
  return _mm256_cvtph_ps(fp8_f16_images8<E4m3, KeepNan>(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
#endif

#if defined(__AVX512F__)
// The f16 images of the 16 codes of `bytes`.
template <bool E4m3, bool KeepNan = false>
inline __m256i fp8_f16_images16(__m128i bytes) {
  if constexpr (!E4m3) return _mm256_slli_epi16(_mm256_cvtepu8_epi16(bytes), 8);
  const __m256i wide = _mm256_cvtepi8_epi16(bytes);
  const __m256i h = _mm256_and_si256(_mm256_slli_epi16(wide, 7), _mm256_set1_epi16(static_cast<short>(0xbfff)));
  if constexpr (!KeepNan) return h;
  const __m256i magnitude = _mm256_and_si256(wide, _mm256_set1_epi16(0x7f));
  return _mm256_or_si256(h, _mm256_cmpeq_epi16(magnitude, _mm256_set1_epi16(0x7f)));
}
#endif

}  // namespace
}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
