// scaled_dot_product_attention's inner loop, compiled once per ISA: a tile of query rows that share one KV head
// against a range of keys, kAttnKeyBlock keys at a time, each block's K and V rows read once from memory and
// then from cache by every row of the tile (how GQA's q heads share one pass over the KV cache). Each row's
// block of scores is folded into its running max / sum / output (online softmax).
//   f32 K/V whose rows are whole vectors: read in place. bf16 K at the AVX512-BF16 level: scores by vdpbf16ps
//   on the cache rows in place (bf16 x bf16 products are exact in f32). Otherwise (bf16 below that level, f16,
//   odd head dims), and V always unless it is f32 in place: rows widened to f32 scratch per block.
// Tiles of at most 8 rows (4 at the scalar level), decode's, go to attention_decode.cpp instead.
// Precision: the softmax weights P stay f32 and multiply V in f32, as in the decode tile. (Rounding P to bf16 for
// a vdpbf16ps P.V, as FlashAttention's second GEMM does, cost the end-to-end logits 93 -> 80 dB in `fourfold
// check`; it was dropped.)
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include <immintrin.h>   // _mm_prefetch (SSE, every level); the AVX512-BF16 path's intrinsics

#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/kernels/attention_shared.h"   // folds, prefetch, mask values; the decode tile
#include "backends/cpu/kernels/vec.h"   // lanes, vector types, loads and stores
#include "fourfold/dtype.h"   // the out-of-line scalar f16/bf16 conversions, for tails and f16

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

static_assert(kAttnPad % kLanes == 0 && kAttnKeyBlock % kLanes == 0);

inline vf loadu(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storeu(float* p, vf v) { std::memcpy(p, &v, sizeof v); }

// ---- widening K and V rows into f32 scratch rows of n_pad floats (zeros past n).
void widen(const uint8_t* src, RowType type, int64_t n, int64_t n_pad, float* dst) {
  int64_t i = 0;
  if (type == RowType::f32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
    i = n;
  } else if (type == RowType::bf16) {
    const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
    for (; i + kLanes <= n; i += kLanes) {
      vh h;
      std::memcpy(&h, s + i, sizeof h);
      storeu(dst + i, (vf)(__builtin_convertvector(h, vu) << 16));
    }
    for (; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
  } else {
    const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
    for (; i < n; ++i) dst[i] = f16_to_f32(s[i]);
  }
  for (; i < n_pad; ++i) dst[i] = 0.0f;
}

// Where one block's K (or V) rows are read: f32 rows `stride` floats apart, `len` floats of each used (a
// multiple of kLanes): the widened scratch rows, or an f32 cache's own rows when no widening is needed.
struct F32Rows {
  const float* base;
  int64_t stride, len;
};

// scores[j] = scale * q . k_j for the keys of `groups` groups of kLanes rows. Four keys at a time share each
// load of q (more would run out of registers for the row pointers and sums).
void score_row(const float* q, F32Rows k, int groups, float scale, float* scores) {
  for (int g = 0; g < groups; ++g) {
    vf acc[kLanes];
    for (int j = 0; j < kLanes; j += 4) {
      const float* k0 = k.base + (g * kLanes + j) * k.stride;
      const float *k1 = k0 + k.stride, *k2 = k1 + k.stride, *k3 = k2 + k.stride;
      vf a0{}, a1{}, a2{}, a3{};
      for (int64_t c = 0; c < k.len; c += kLanes) {
        const vf qv = loadu(q + c);
        a0 += qv * loadu(k0 + c);
        a1 += qv * loadu(k1 + c);
        a2 += qv * loadu(k2 + c);
        a3 += qv * loadu(k3 + c);
      }
      acc[j] = a0, acc[j + 1] = a1, acc[j + 2] = a2, acc[j + 3] = a3;
    }
    fold_down<kLanes>(acc);
    storeu(scores + g * kLanes, acc[0] * splat(scale));
  }
}

// out[0, NB vectors) += sum_j p[j] * v_j, the accumulators held in registers across the keys.
template <int NB>
void weigh_values(const float* p, const float* vs, int64_t stride, int nk, float* out) {
  vf o[NB];
  for (int b = 0; b < NB; ++b) o[b] = loadu(out + b * kLanes);
  for (int j = 0; j < nk; ++j) {
    const vf pj = splat(p[j]);
    const float* row = vs + j * stride;
    for (int b = 0; b < NB; ++b) o[b] += pj * loadu(row + b * kLanes);
  }
  for (int b = 0; b < NB; ++b) storeu(out + b * kLanes, o[b]);
}

constexpr int kValueVectors = 8;   // output vectors held in registers while the keys stream past

void weigh_row(const float* p, F32Rows v, int nk, float* out) {
  int64_t c = 0;
  for (; c + kValueVectors * kLanes <= v.len; c += kValueVectors * kLanes)
    weigh_values<kValueVectors>(p, v.base + c, v.stride, nk, out + c);
  for (; c < v.len; c += kLanes) weigh_values<1>(p, v.base + c, v.stride, nk, out + c);
}

// Applies the mask, the causal limit and the padding to one row's block of scores (keys j0 + [0, n_pad)).
void mask_scores(const AttnTile& t, int r, int64_t j0, int nk, int n_pad, float* s) {
  if (t.mask == AttnMask::boolean) {
    const uint8_t* m = t.mask_row[r] + j0 * t.mask_stride;
    for (int j = 0; j < nk; ++j)
      if (m[j * t.mask_stride] == 0) s[j] = -kInf;
  } else if (t.mask == AttnMask::additive) {
    const uint8_t* m = t.mask_row[r] + j0 * t.mask_stride;
    for (int j = 0; j < nk; ++j) s[j] += mask_value(m + j * t.mask_stride, t.mask_type);
  }
  const int64_t limit = std::clamp<int64_t>(t.key_limit[r] - j0, 0, nk);
  for (int64_t j = limit; j < n_pad; ++j) s[j] = -kInf;
}

// Folds one row's masked block of scores into its running state; false when the block adds nothing.
bool online_update(float* s, int n_pad, float& m, float& l, float* acc, int64_t ev_pad) {
  vf bm = splat(-kInf);
  for (int j = 0; j < n_pad; j += kLanes) {
    const vf v = loadu(s + j);
    bm = v > bm ? v : bm;   // a NaN never becomes the max; exp(NaN - max) propagates it below
  }
  float block_max = -kInf;
  for (int j = 0; j < kLanes; ++j) block_max = bm[j] > block_max ? bm[j] : block_max;
  bool any_nan = false;
  if (block_max == -kInf) {
    for (int j = 0; j < n_pad; ++j) any_nan = any_nan || s[j] != s[j];
    if (!any_nan) return false;   // nothing attended in this block
  }
  const float m_new = block_max > m ? block_max : m;
  // A row still at -inf subtracts 0 instead, so that masked keys give exp(-inf) = 0 and not NaN.
  const float shift = m_new == -kInf ? 0.0f : m_new;
  const vf vshift = splat(shift);
  for (int j = 0; j < n_pad; j += kLanes) storeu(s + j, loadu(s + j) - vshift);
  exp_f32(s, s, n_pad);
  vf sum = vf{};
  for (int j = 0; j < n_pad; j += kLanes) sum += loadu(s + j);
  float block_sum = 0.0f;
  for (int j = 0; j < kLanes; ++j) block_sum += sum[j];
  if (m_new != m) {
    float alpha = m - shift;   // m = -inf (nothing seen yet) gives 0
    exp_f32(&alpha, &alpha, 1);
    l *= alpha;
    const vf va = splat(alpha);
    for (int64_t c = 0; c < ev_pad; c += kLanes) storeu(acc + c, loadu(acc + c) * va);
  }
  l += block_sum;
  m = m_new;
  return true;
}


#if defined(__AVX512BF16__)
// ---- bf16 K with AVX512-BF16: vdpbf16ps multiplies bf16 pairs into f32 sums, twice the work of an f32 FMA per
// instruction. Scores take q (bf16 already: q has K's dtype) against the cache rows as they are, no widening.

constexpr int64_t round32(int64_t n) { return (n + 31) / 32 * 32; }

// q rows (f32, zero-padded to e_pad) as bf16, zero-padded to round32(e).
void q_to_bf16(const float* q, int rows, int64_t e_pad, int64_t e32, uint16_t* out) {
  for (int r = 0; r < rows; ++r)
    for (int64_t c = 0; c < e32; c += 32) {
      const __m512 lo = c < e_pad ? _mm512_loadu_ps(q + r * e_pad + c) : _mm512_setzero_ps();
      const __m512 hi = c + 16 < e_pad ? _mm512_loadu_ps(q + r * e_pad + c + 16) : _mm512_setzero_ps();
      _mm512_storeu_si512(out + r * e32 + c, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
}

// As score_row, on the bf16 cache rows in place: keys past the block re-read its last one (masked later).
void score_row_bf16(const uint16_t* q, const AttnTile& t, int64_t j0, int nk, int groups, float* scores) {
  const int64_t full = t.e / 32 * 32;
  const __mmask32 tail = static_cast<__mmask32>((uint64_t{1} << (t.e - full)) - 1);
  auto row = [&](int j) { return t.k + (j0 + std::min(j, nk - 1)) * t.k_stride; };
  for (int g = 0; g < groups; ++g) {
    vf acc[kLanes];
    for (int j = 0; j < kLanes; j += 4) {
      const uint8_t *k0 = row(g * kLanes + j), *k1 = row(g * kLanes + j + 1), *k2 = row(g * kLanes + j + 2),
                    *k3 = row(g * kLanes + j + 3);
      __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (int64_t c = 0; c < full; c += 32) {
        const __m512bh qv = (__m512bh)_mm512_loadu_si512(q + c);
        a0 = _mm512_dpbf16_ps(a0, qv, (__m512bh)_mm512_loadu_si512(k0 + 2 * c));
        a1 = _mm512_dpbf16_ps(a1, qv, (__m512bh)_mm512_loadu_si512(k1 + 2 * c));
        a2 = _mm512_dpbf16_ps(a2, qv, (__m512bh)_mm512_loadu_si512(k2 + 2 * c));
        a3 = _mm512_dpbf16_ps(a3, qv, (__m512bh)_mm512_loadu_si512(k3 + 2 * c));
      }
      if (tail != 0) {   // masked loads: no read past a row's e elements
        const __m512bh qv = (__m512bh)_mm512_maskz_loadu_epi16(tail, q + full);
        a0 = _mm512_dpbf16_ps(a0, qv, (__m512bh)_mm512_maskz_loadu_epi16(tail, k0 + 2 * full));
        a1 = _mm512_dpbf16_ps(a1, qv, (__m512bh)_mm512_maskz_loadu_epi16(tail, k1 + 2 * full));
        a2 = _mm512_dpbf16_ps(a2, qv, (__m512bh)_mm512_maskz_loadu_epi16(tail, k2 + 2 * full));
        a3 = _mm512_dpbf16_ps(a3, qv, (__m512bh)_mm512_maskz_loadu_epi16(tail, k3 + 2 * full));
      }
      acc[j] = (vf)a0, acc[j + 1] = (vf)a1, acc[j + 2] = (vf)a2, acc[j + 3] = (vf)a3;
    }
    fold_down<kLanes>(acc);
    storeu(scores + g * kLanes, acc[0] * splat(t.scale));
  }
}

#endif

}  // namespace

void attention_tile(const AttnTile& t) {
  if (attention_decode_tile(t)) return;   // a few rows (decode): streams K and V once, see attention_decode.cpp
  float* ks = t.scratch;
  float* vs = ks + kAttnKeyBlock * t.e_pad;
  float* scores = vs + kAttnKeyBlock * t.ev_pad;
#if defined(__AVX512BF16__)
  // bf16 K is scored in place; the tile's q rows as bf16 take the widened K's scratch.
  const bool k_bf16 = t.kv_type == RowType::bf16;
  const int64_t e32 = round32(t.e);
  uint16_t* q16 = reinterpret_cast<uint16_t*>(ks);
  if (k_bf16) q_to_bf16(t.q, t.rows, t.e_pad, e32, q16);
#else
  constexpr bool k_bf16 = false;
#endif
  // An f32 cache whose rows are whole vectors is read in place; anything else is widened block by block.
  const bool k_in_place = t.kv_type == RowType::f32 && t.e % kLanes == 0;
  const bool v_in_place = t.kv_type == RowType::f32 && t.ev % kLanes == 0;
  for (int64_t j0 = t.key_begin; j0 < t.key_end; j0 += kAttnKeyBlock) {
    const int nk = static_cast<int>(std::min<int64_t>(kAttnKeyBlock, t.key_end - j0));
    const int groups = (nk + kLanes - 1) / kLanes;
    const int n_pad = groups * kLanes;
    F32Rows k{ks, t.e_pad, t.e_pad}, v{vs, t.ev_pad, t.ev_pad};
    prefetch_next_block(t, j0);
    if (k_in_place && nk == n_pad) {
      k = {reinterpret_cast<const float*>(t.k + j0 * t.k_stride), t.k_stride / 4, t.e};
    } else if (!k_bf16) {
      for (int j = 0; j < nk; ++j) widen(t.k + (j0 + j) * t.k_stride, t.kv_type, t.e, t.e_pad, ks + j * t.e_pad);
      if (nk < n_pad) std::memset(ks + nk * t.e_pad, 0, static_cast<size_t>((n_pad - nk) * t.e_pad) * 4);
    }
    if (v_in_place) {
      v = {reinterpret_cast<const float*>(t.v + j0 * t.v_stride), t.v_stride / 4, t.ev};
    } else {
      for (int j = 0; j < nk; ++j) widen(t.v + (j0 + j) * t.v_stride, t.kv_type, t.ev, t.ev_pad, vs + j * t.ev_pad);
    }
    for (int r = 0; r < t.rows; ++r) {
      if (t.key_limit[r] <= j0) continue;   // causal: the whole block lies past this row's last key
      float* s = scores + r * kAttnKeyBlock;
#if defined(__AVX512BF16__)
      if (k_bf16) score_row_bf16(q16 + r * e32, t, j0, nk, groups, s);
      else score_row(t.q + r * t.e_pad, k, groups, t.scale, s);
#else
      score_row(t.q + r * t.e_pad, k, groups, t.scale, s);
#endif
      mask_scores(t, r, j0, nk, n_pad, s);
      float* acc = t.acc + r * t.ev_pad;
      if (online_update(s, n_pad, t.m[r], t.l[r], acc, t.ev_pad)) weigh_row(s, v, nk, acc);
    }
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
