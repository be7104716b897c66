// FP8 (e4m3fn, e5m2) codes as their exact bf16, 64 at a time, for the per-ISA kernels that multiply fp8 weights
// on vdpbf16ps (gemv.cpp's pair route, gemm_direct.cpp's fp8 weights). Included only by kernel files, inside
// fourfold::cpu::<level>'s anonymous namespace, like fp8.h: every definition here is per-ISA and internal.
//
// Every e4m3fn and e5m2 value is a bf16 value (3 and 2 mantissa bits, exponents well inside bf16's, subnormals
// included), so a code becomes its exact bf16 by two 128-entry byte lookups on its magnitude (vpermi2b: the
// high and the low byte) and its sign bit or-ed back in; NaN codes become bf16 NaN and e5m2's inf bf16 inf.
#pragma once

#include <cstdint>

#if defined(__AVX512BF16__) && defined(__AVX512VBMI__)
#include <immintrin.h>
#endif

#include "fourfold/dtype.h"   // fp8_e4m3fn_to_f32, fp8_e5m2_to_f32, f32_to_bf16

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

// The bf16 of every code (exact for every finite code; NaN stays NaN), for the levels without the lookups and
// for what is left past the last whole line.
template <bool E4m3>
inline const uint16_t* fp8_bf16_table() {
  static const auto table = [] {
    struct { uint16_t v[256]; } t{};
    for (int c = 0; c < 256; ++c) {
      const auto code = static_cast<uint8_t>(c);
      t.v[c] = f32_to_bf16(E4m3 ? fp8_e4m3fn_to_f32(code) : fp8_e5m2_to_f32(code));
    }
    return t;
  }();
  return table.v;
}

#if defined(__AVX512BF16__) && defined(__AVX512VBMI__)
struct PairTables {
  __m512i hi0, hi1, lo0, lo1;   // bytes of the bf16 of magnitudes 0..63 and 64..127
};

template <bool E4m3>
PairTables pair_tables() {
  alignas(64) static const auto bytes = [] {
    struct { uint8_t hi[128], lo[128]; } t{};
    for (int c = 0; c < 128; ++c) {
      const uint16_t b = fp8_bf16_table<E4m3>()[c];
      t.hi[c] = static_cast<uint8_t>(b >> 8);
      t.lo[c] = static_cast<uint8_t>(b & 0xff);
    }
    return t;
  }();
  return {_mm512_load_si512(bytes.hi), _mm512_load_si512(bytes.hi + 64), _mm512_load_si512(bytes.lo),
          _mm512_load_si512(bytes.lo + 64)};
}

// The two vectors of 32 bf16 of the 64 codes at q in gemv_pair_slot's layout (each 16-byte lane of w0 holds 8
// codes, the next 8 are in the same lane of w1); count < 64 reads only that many (a masked load: code 0 past
// them, which is +0).
[[gnu::always_inline]] inline void pair_weights(const PairTables& t, const uint8_t* q, int64_t count, __m512i& w0,
                                                __m512i& w1) {
  const __m512i c = count == 64 ? _mm512_loadu_si512(q) : _mm512_maskz_loadu_epi8((uint64_t{1} << count) - 1, q);
  __m512i hi = _mm512_permutex2var_epi8(t.hi0, c, t.hi1);   // index bit 7 (the sign) is ignored
  hi = _mm512_ternarylogic_epi32(hi, c, _mm512_set1_epi8(static_cast<char>(0x80)), 0xF8);   // hi | (c & 0x80)
  const __m512i lo = _mm512_permutex2var_epi8(t.lo0, c, t.lo1);
  w0 = _mm512_unpacklo_epi8(lo, hi);
  w1 = _mm512_unpackhi_epi8(lo, hi);
}

// The 64 codes at q as 64 bf16 in their own order at dst: pair_weights' lanes put back in sequence.
[[gnu::always_inline]] inline void pair_weights_in_order(const PairTables& t, const uint8_t* q, uint16_t* dst) {
  __m512i w0, w1;
  pair_weights(t, q, 64, w0, w1);
  const __m512i first = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0), second = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
  _mm512_storeu_si512(dst, _mm512_permutex2var_epi64(w0, first, w1));
  _mm512_storeu_si512(dst + 32, _mm512_permutex2var_epi64(w0, second, w1));
}
#endif

}  // namespace
}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
