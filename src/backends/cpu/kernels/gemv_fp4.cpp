// FP4 rows of the decode GEMV (NVFP4, MXFP4: core/fp4_blocks.h), compiled once per ISA. Each group of 32 values
// (16 code bytes) becomes its even and its odd values as f32 lanes, exactly (e2m1 has 16 values, each exact in
// f16 and f32), which meet the activations laid out even-then-odd (kernels.h, gemv_fp4_slot), so no shuffle
// interleaves them. A block's products are summed per lane and times the block's scale join the row's total:
// exact products, f32 sums, the scale applied once per block and lane; the global scale once per output.
// - avx512 levels: vpermps is a 16-entry table lookup on each 32-bit lane's low 4 bits: on the code bytes widened
//   to 32 bits it reads the low nibbles, and after a shift by 4 the high ones. Two lookups per 32 values.
// - avx2: vpshufb puts each nibble's f16 high byte (every e2m1 value's f16 has a zero low byte) in place, an
//   unpack adds the zero low bytes and vcvtph2ps widens them.
// - scalar: the table, value by value.
// docs/fp4.md has the rates measured, and the routes tried and dropped (vpermw lookups, vdpbf16ps on bf16 pairs).
#include <cstdint>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/gemv_rows.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

constexpr int kHalf = kGemvFp4Group / 2;   // the even (and the odd) values of a group
constexpr int kVecs = kHalf / kLanes;      // vectors per half
constexpr int64_t kGroupBytes = kHalf;     // two values a byte
constexpr int64_t kGroupsPerLine = kLineBytes / kGroupBytes;

alignas(64) constexpr float kE2m1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                         -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

struct Values {
  vf even[kVecs], odd[kVecs];   // values 2j and 2j + 1, j = v * kLanes + lane
};

[[gnu::always_inline]] inline Values decode(const uint8_t* q) {
  Values g;
#if defined(__AVX512F__)
  const __m512 table = _mm512_load_ps(kE2m1);
  const __m512i b = _mm512_maskz_cvtepu8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
  g.even[0] = (vf)_mm512_maskz_permutexvar_ps(0xffff, b, table);
  g.odd[0] = (vf)_mm512_maskz_permutexvar_ps(0xffff, _mm512_maskz_srli_epi32(0xffff, b, 4), table);
#elif defined(__AVX2__)
  const __m128i high_bytes = _mm_setr_epi8(0x00, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46, static_cast<char>(0x80),
                                           static_cast<char>(0xB8), static_cast<char>(0xBC), static_cast<char>(0xBE),
                                           static_cast<char>(0xC0), static_cast<char>(0xC2), static_cast<char>(0xC4),
                                           static_cast<char>(0xC6));
  const __m128i nibble = _mm_set1_epi8(0x0F), zero = _mm_setzero_si128();
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  const __m128i he = _mm_shuffle_epi8(high_bytes, _mm_and_si128(bytes, nibble));
  const __m128i ho = _mm_shuffle_epi8(high_bytes, _mm_and_si128(_mm_srli_epi16(bytes, 4), nibble));
  g.even[0] = (vf)_mm256_cvtph_ps(_mm_unpacklo_epi8(zero, he));
  g.even[1] = (vf)_mm256_cvtph_ps(_mm_unpackhi_epi8(zero, he));
  g.odd[0] = (vf)_mm256_cvtph_ps(_mm_unpacklo_epi8(zero, ho));
  g.odd[1] = (vf)_mm256_cvtph_ps(_mm_unpackhi_epi8(zero, ho));
#else
  float e[kHalf], o[kHalf];
  for (int j = 0; j < kHalf; ++j) {
    e[j] = kE2m1[q[j] & 0xF];
    o[j] = kE2m1[q[j] >> 4];
  }
  std::memcpy(g.even, e, sizeof e);
  std::memcpy(g.odd, o, sizeof o);
#endif
  return g;
}

// The scale of each vector's lanes in group gi of a row whose scale codes start at sc. Lane j of a half holds
// values 2j and 2j + 1: under 16-value blocks j < 8 is the group's first block and j >= 8 its second (absent
// in a half group at the end: `blocks` is then 1); under 32-value blocks the group is one block.
[[gnu::always_inline]] inline void scales(const GemvPlan& p, const uint8_t* sc, int64_t gi, int blocks, vf (&s)[kVecs]) {
  if (p.fp4_block != 16) {
    const vf v = splat(p.fp4_scale_table[sc[gi * p.fp4_scale_k_stride]]);
    for (int i = 0; i < kVecs; ++i) s[i] = v;
    return;
  }
  const float s0 = p.fp4_scale_table[sc[2 * gi * p.fp4_scale_k_stride]];
  const float s1 = blocks == 2 ? p.fp4_scale_table[sc[(2 * gi + 1) * p.fp4_scale_k_stride]] : s0;
#if defined(__AVX512F__)
  s[0] = (vf)_mm512_mask_blend_ps(0xff00, _mm512_set1_ps(s0), _mm512_set1_ps(s1));
#else
  for (int i = 0; i < kVecs; ++i) s[i] = splat(i * kLanes < kHalf / 2 ? s0 : s1);
#endif
}

template <int M, int R>
void rows(const GemvPlan& p, int64_t n0) {
  const RowGroup<R> g(p, n0);
  const uint8_t* sc[R];
  for (int r = 0; r < R; ++r) sc[r] = p.fp4_scale + (n0 + r) * p.fp4_scale_n_stride;
  vf total[R][M] = {};
  // Group gi of each row, its codes at q[r].
  auto group = [&](int64_t gi, const uint8_t* const (&q)[R], int blocks) __attribute__((always_inline)) {
    vf xe[M][kVecs], xo[M][kVecs];
    for (int m = 0; m < M; ++m)
      for (int v = 0; v < kVecs; ++v) {
        const float* x = p.x + m * p.fp4_x_ld + gi * kGemvFp4Group + v * kLanes;
        xe[m][v] = load_x(x, 0);
        xo[m][v] = load_x(x, kHalf);
      }
    for (int r = 0; r < R; ++r) {
      const Values w = decode(q[r]);
      vf s[kVecs];
      scales(p, sc[r], gi, blocks, s);
      for (int m = 0; m < M; ++m)
        for (int v = 0; v < kVecs; ++v) total[r][m] += (w.even[v] * xe[m][v] + w.odd[v] * xo[m][v]) * s[v];
    }
  };
  const int64_t groups = p.k / kGemvFp4Group;
  int64_t gi = 0;
  const uint8_t* q[R];
  for (; gi + kGroupsPerLine <= groups; gi += kGroupsPerLine) {
    for (int r = 0; r < R; ++r) __builtin_prefetch(g.ahead[r] + gi * kGroupBytes);   // the same line R rows later
    for (int64_t j = 0; j < kGroupsPerLine; ++j) {
      for (int r = 0; r < R; ++r) q[r] = g.w[r] + (gi + j) * kGroupBytes;
      group(gi + j, q, 2);
    }
  }
  for (; gi < groups; ++gi) {
    for (int r = 0; r < R; ++r) q[r] = g.w[r] + gi * kGroupBytes;
    group(gi, q, 2);
  }
  if (p.k % kGemvFp4Group != 0) {   // half a group (NVFP4 with an odd number of blocks): its 8 bytes, zeros after
    alignas(16) uint8_t last[R][kGroupBytes] = {};
    for (int r = 0; r < R; ++r) {
      std::memcpy(last[r], g.w[r] + gi * kGroupBytes, kGroupBytes / 2);
      q[r] = last[r];
    }
    group(gi, q, 1);
  }
  const bool nan[R] = {};
  g.store(total, nan, p.fp4_global);
}

template <int M>
void run(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  constexpr int R = M <= 2 ? 4 : M <= 4 ? 2 : 1;
  int64_t n = n_begin;
  for (; n + R <= n_end; n += R) rows<M, R>(p, n);
  for (; n < n_end; ++n) rows<M, 1>(p, n);
}

}  // namespace

void gemv_fp4_rows(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  switch (p.m) {
    case 1: run<1>(p, n_begin, n_end); break;
    case 2: run<2>(p, n_begin, n_end); break;
    case 3: run<3>(p, n_begin, n_end); break;
    case 4: run<4>(p, n_begin, n_end); break;
    case 5: run<5>(p, n_begin, n_end); break;
    case 6: run<6>(p, n_begin, n_end); break;
    case 7: run<7>(p, n_begin, n_end); break;
    default: run<8>(p, n_begin, n_end); break;
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
