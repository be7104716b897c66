// Pieces shared by attention.cpp (the general tile) and attention_decode.cpp (few query rows): summing kLanes
// dot products at once, prefetching the next key block, reading a mask element, q rows as bf16. Included only
// by those kernel files, inside fourfold::cpu::<level>; the anonymous namespace keeps each level's copy internal.
#pragma once

#include <algorithm>
#include <cstring>
#include <utility>

#include <immintrin.h>   // _mm_prefetch (SSE, every level); the AVX512-BF16 q conversion

#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/kernels/vec.h"
#include "fourfold/dtype.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {

// The decode tile (attention_decode.cpp): false when the tile is not one it takes (too many rows).
bool attention_decode_tile(const AttnTile& t);

namespace {

// ---- summing kLanes vectors at once: lane j of the result is the sum of a[j]'s lanes.
// A fold takes two vectors whose lanes hold blocks of w partial sums (one block per key) and returns one whose
// blocks are w / 2 wide: x's blocks (low half + high half) first, then y's. log2(kLanes) rounds of folds take
// kLanes vectors to one, keys in order: 3 (kLanes - 1) shuffles and adds per kLanes dot products instead of
// a horizontal sum per dot product.
constexpr int fold_lane(int w, int o, int high) {
  const int half = kLanes / 2;
  const int t = o % half, block = t / (w / 2), offset = t % (w / 2);
  return (o / half) * kLanes + block * w + offset + high * (w / 2);
}
template <int W, int... I>
constexpr vi fold_mask(std::integer_sequence<int, I...>, int high) {
  return vi{fold_lane(W, I, high)...};
}
template <int W>
inline vf fold(vf x, vf y) {
  const vi low = fold_mask<W>(std::make_integer_sequence<int, kLanes>{}, 0);
  const vi high = fold_mask<W>(std::make_integer_sequence<int, kLanes>{}, 1);
  return __builtin_shuffle(x, y, low) + __builtin_shuffle(x, y, high);
}
// a[0, W) hold blocks W wide; folds them down to a[0] (blocks of 1).
template <int W>
inline void fold_down(vf* a) {
  for (int k = 0; k < W / 2; ++k) a[k] = fold<W>(a[2 * k], a[2 * k + 1]);
  if constexpr (W > 2) fold_down<W / 2>(a);
}

// Asks for the K and V rows of the block after j0 while this one is computed: the cache is read once, so its
// latency is only hidden by fetching ahead (the hardware prefetcher alone leaves the tile stalled on its loads).
// Inlined by force: as a function of its own GCC deems it free of side effects and deletes the call.
[[gnu::always_inline]] inline void prefetch_next_block(const AttnTile& t, int64_t j0) {
  const int64_t begin = j0 + kAttnKeyBlock, end = std::min<int64_t>(t.key_end, begin + kAttnKeyBlock);
  const int64_t es = t.kv_type == RowType::f32 ? 4 : 2;
  const int64_t k_bytes = t.e * es, v_bytes = t.ev * es;
  for (int64_t j = begin; j < end; ++j) {
    const char* k = reinterpret_cast<const char*>(t.k + j * t.k_stride);
    const char* v = reinterpret_cast<const char*>(t.v + j * t.v_stride);
    for (int64_t b = 0; b < k_bytes; b += 64) _mm_prefetch(k + b, _MM_HINT_T0);
    for (int64_t b = 0; b < v_bytes; b += 64) _mm_prefetch(v + b, _MM_HINT_T0);
  }
}

inline float mask_value(const uint8_t* p, RowType type) {
  if (type == RowType::f32) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return type == RowType::bf16 ? bf16_to_f32(h) : f16_to_f32(h);
}

#if defined(__AVX512BF16__)
// q rows (f32, zero-padded to e_pad) as bf16 rows of e32 (e rounded up to 32) elements, zeros past e_pad: what
// vdpbf16ps takes (q has K's dtype, so the rounding is exact).
void q_to_bf16(const float* q, int rows, int64_t e_pad, int64_t e32, uint16_t* out) {
  for (int r = 0; r < rows; ++r)
    for (int64_t c = 0; c < e32; c += 32) {
      const __m512 lo = c < e_pad ? _mm512_loadu_ps(q + r * e_pad + c) : _mm512_setzero_ps();
      const __m512 hi = c + 16 < e_pad ? _mm512_loadu_ps(q + r * e_pad + c + 16) : _mm512_setzero_ps();
      _mm512_storeu_si512(out + r * e32 + c, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
}
#endif

}  // namespace
}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
