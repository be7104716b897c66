// scaled_dot_product_attention's decode tile, compiled once per ISA: up to 8 query rows (4 at the scalar level; one token's q heads
// sharing a KV head: GQA folded) against a range of keys, each K and V row read once from memory and used by
// every row while it is in registers. The general tile (attention.cpp) instead packs each block of K and V into
// GEMM panels, which pays only when many rows reuse them; with one query row per head the arithmetic per cache
// byte is what bounds decode, so here:
//   - scores: RB rows x KB keys (RB * KB = kLanes) accumulate in kLanes vectors, each K vector (widened in
//     registers, or raw bf16 for vdpbf16ps) loaded once for the RB rows; one fold per kLanes dot products
//     (attention_shared.h) leaves them in one vector, stored whole: scores are key-major, [key][row].
//   - online softmax on that key-major block, vectorized across rows and keys at once.
//   - values: RB rows x 2 vectors of columns accumulate in registers while the block's keys stream past, each V
//     vector widened once for the RB rows; the weights stay f32 (no bf16 rounding of P at any level). With GQA
//     8 decode is compute-bound here (8 flops per bf16 cache byte); weights rounded to bf16 for vdpbf16ps would
//     be faster but would lose their precision, so they stay f32 (docs/decode.md, attention).
#include <algorithm>
#include <cstring>

#include "backends/cpu/kernels/attention_shared.h"
#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/kernels/vec.h"
#include "fourfold/dtype.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

// Keys per block: the block's V rows are re-read per group of output columns, so they should stay in L1 (32 KiB
// on Zen 4): 32 keys of 128 f32 are 16 KiB.
constexpr int kBlock = 32;
static_assert(kBlock % kLanes == 0 && kBlock <= kAttnKeyBlock);

constexpr int kMaxRows = kLanes < 8 ? kLanes : 8;   // the most rows one pass holds (RB)
constexpr int kCols = kLanes == 16 ? 2 : 1;         // value vectors per row in registers (RB * kCols accumulators)

inline vf loadu(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storeu(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
// vec.h's splat is 0 + x, a scalar add before each broadcast (x = -0 must stay -0); this is the broadcast alone.
inline vf bcast(float x) {
#if defined(__AVX512F__)
  return (vf)_mm512_set1_ps(x);
#else
  vf v;
  for (int i = 0; i < kLanes; ++i) v[i] = x;
  return v;
#endif
}

// Asks for K and V rows of key j (a block ahead) while this block is scored: spread over the block, one key
// group at a time, rather than a burst the load queue would drop or stall on (the cache is read once, so without
// it every new key's lines stall the tile: docs/decode.md, attention); into L2, not L1, so that the fetched
// lines do not evict the block's V rows, which are re-read once per group of output columns.
[[gnu::always_inline]] inline void prefetch_key(const AttnTile& t, int64_t j) {
  if (j >= t.key_end) return;
  const int64_t es = t.kv_type == RowType::f32 ? 4 : 2;
  const char* k = reinterpret_cast<const char*>(t.k + j * t.k_stride);
  const char* v = reinterpret_cast<const char*>(t.v + j * t.v_stride);
  for (int64_t b = 0; b < t.e * es; b += 64) _mm_prefetch(k + b, _MM_HINT_T1);
  for (int64_t b = 0; b < t.ev * es; b += 64) _mm_prefetch(v + b, _MM_HINT_T1);
}

// kLanes K or V elements from element i as f32; bf16 at AVX-512 by one zero-extension and shift (vec.h's
// generic conversion compiles to two halves and an insert).
template <RowType T>
inline vf load_kv(const uint8_t* p, int64_t i) {
#if defined(__AVX512F__)
  if constexpr (T == RowType::bf16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 * i));
    return (vf)_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16);   // maskz: GCC 12 warns on the unmasked forms
  }
#endif
  return load<T>(p, i);
}

// Where the decode tile keeps its rows: q (f32, and bf16 at the AVX512-BF16 level), the block's scores
// [kBlock][RB] and the output accumulators [RB][ev_pad], in the tile's scratch.
struct Rows {
  const float* q;        // [RB][e_pad], rows past t.rows zero
  const uint16_t* q16;   // [RB][round32(e)] bf16, or null
  float* scores;
  float* acc;
  float m[kMaxRows], l[kMaxRows];
};

// scores[j][r] = scale * q_r . k_j for keys [0, nk) of the block at k, KB keys at a time (keys past nk re-read
// key nk - 1; masked later). Lane jj * RB + r of the folded vector is (row r, key j + jj).
template <RowType T, int RB>
void score_block(const AttnTile& t, const Rows& w, int64_t j0, int nk) {
  const uint8_t* k = t.k + j0 * t.k_stride;
  constexpr int KB = kLanes / RB;
  const int64_t e = t.e;
  for (int j = 0; j < nk; j += KB) {
    const uint8_t* row[KB];
    for (int jj = 0; jj < KB; ++jj) row[jj] = k + std::min(j + jj, nk - 1) * t.k_stride;
    for (int jj = 0; jj < KB; ++jj) prefetch_key(t, j0 + kBlock + j + jj);
    vf acc[kLanes];
    for (int i = 0; i < kLanes; ++i) acc[i] = vf{};
    int64_t c = 0;
    for (; c + kLanes <= e; c += kLanes) {
      vf kv[KB];
      for (int jj = 0; jj < KB; ++jj) kv[jj] = load_kv<T>(row[jj], c);
      for (int r = 0; r < RB; ++r) {
        const vf qv = loadu(w.q + r * t.e_pad + c);
        for (int jj = 0; jj < KB; ++jj) acc[jj * RB + r] += qv * kv[jj];
      }
    }
    if (c < e) {   // q is zero-padded; K's tail is read element by element, never past the row
      vf kv[KB];
      for (int jj = 0; jj < KB; ++jj) kv[jj] = load_tail<T>(row[jj], c, e - c, 0.0f);
      for (int r = 0; r < RB; ++r) {
        const vf qv = loadu(w.q + r * t.e_pad + c);
        for (int jj = 0; jj < KB; ++jj) acc[jj * RB + r] += qv * kv[jj];
      }
    }
    fold_down<kLanes>(acc);
    storeu(w.scores + j * RB, acc[0] * bcast(t.scale));
  }
}

#if defined(__AVX512BF16__)
// As score_block for bf16 K with vdpbf16ps on the cache rows as they are (q is bf16 already: q has K's dtype,
// so its bf16 copy is exact; the products are exact and summed in f32).
template <int RB>
void score_block_bf16(const AttnTile& t, const Rows& w, int64_t j0, int nk) {
  const uint8_t* k = t.k + j0 * t.k_stride;
  constexpr int KB = kLanes / RB;
  const int64_t e32 = (t.e + 31) / 32 * 32, full = t.e / 32 * 32;
  const __mmask32 tail = static_cast<__mmask32>((uint64_t{1} << (t.e - full)) - 1);
  for (int j = 0; j < nk; j += KB) {
    const uint8_t* row[KB];
    for (int jj = 0; jj < KB; ++jj) row[jj] = k + std::min(j + jj, nk - 1) * t.k_stride;
    for (int jj = 0; jj < KB; ++jj) prefetch_key(t, j0 + kBlock + j + jj);
    __m512 acc[kLanes];
    for (int i = 0; i < kLanes; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t c = 0; c < e32; c += 32) {
      __m512bh kv[KB];
      for (int jj = 0; jj < KB; ++jj)   // masked at the tail: no read past a row's e elements
        kv[jj] = (__m512bh)(c < full ? _mm512_loadu_si512(row[jj] + 2 * c) : _mm512_maskz_loadu_epi16(tail, row[jj] + 2 * c));
      for (int r = 0; r < RB; ++r) {
        const __m512bh qv = (__m512bh)_mm512_loadu_si512(w.q16 + r * e32 + c);
        for (int jj = 0; jj < KB; ++jj) acc[jj * RB + r] = _mm512_dpbf16_ps(acc[jj * RB + r], qv, kv[jj]);
      }
    }
    vf a[kLanes];
    for (int i = 0; i < kLanes; ++i) a[i] = (vf)acc[i];
    fold_down<kLanes>(a);
    storeu(w.scores + j * RB, a[0] * bcast(t.scale));
  }
}
#endif

// Mask, causal limit, unused rows and keys past nk: -inf (or the additive mask) on the key-major block. Costs
// nothing in plain decode (no mask, every key attended).
template <int RB>
void mask_block(const AttnTile& t, int64_t j0, int nk, int n_pad, float* s) {
  for (int r = 0; r < RB; ++r) {
    const int64_t limit = r < t.rows ? std::clamp<int64_t>(t.key_limit[r] - j0, 0, nk) : 0;
    for (int64_t j = limit; j < n_pad; ++j) s[j * RB + r] = -kInf;
    if (t.mask == AttnMask::none || limit == 0) continue;
    const uint8_t* m = t.mask_row[r] + j0 * t.mask_stride;
    if (t.mask == AttnMask::boolean) {
      for (int64_t j = 0; j < limit; ++j)
        if (m[j * t.mask_stride] == 0) s[j * RB + r] = -kInf;
    } else {
      for (int64_t j = 0; j < limit; ++j) s[j * RB + r] += mask_value(m + j * t.mask_stride, t.mask_type);
    }
  }
}

// Lane i of v reduced over the lanes holding the same row (i mod RB): max or sum, every lane getting its row's.
template <int RB, bool Max>
vf reduce_rows(vf v) {
  for (int w = RB; w < kLanes; w *= 2) {
    vi idx;
    for (int i = 0; i < kLanes; ++i) idx[i] = (i + w) % kLanes;
    const vf o = __builtin_shuffle(v, idx);
    if constexpr (Max) {
      v = o > v ? o : v;   // a NaN never becomes the max
    } else {
      v = v + o;
    }
  }
  return v;
}

// Folds the key-major block of scores into the rows' running state: scores become the weights exp(s - m).
template <int RB>
void online_block(const AttnTile& t, Rows& w, int n_pad) {
  float* s = w.scores;
  const int n = n_pad * RB;   // a multiple of kLanes: n_pad is
  vf mx = splat(-kInf);
  for (int i = 0; i < n; i += kLanes) {
    const vf v = loadu(s + i);
    mx = v > mx ? v : mx;
  }
  mx = reduce_rows<RB, true>(mx);
  vf shift, alpha;
  for (int i = 0; i < kLanes; ++i) {
    const int r = i % RB;
    const float m_new = mx[i] > w.m[r] ? mx[i] : w.m[r];
    // A row still at -inf subtracts 0 instead, so that masked keys give exp(-inf) = 0 and not NaN.
    shift[i] = m_new == -kInf ? 0.0f : m_new;
    alpha[i] = w.m[r] - shift[i];   // m = -inf (nothing seen yet) gives 0
  }
  alpha = vexp(alpha);
  vf sum{};
  for (int i = 0; i < n; i += kLanes) {
    const vf p = vexp(loadu(s + i) - shift);
    storeu(s + i, p);
    sum += p;
  }
  sum = reduce_rows<RB, false>(sum);
  for (int r = 0; r < RB; ++r) {
    const float m_new = mx[r] > w.m[r] ? mx[r] : w.m[r];
    if (m_new != w.m[r]) {
      w.l[r] *= alpha[r];
      const vf a = splat(alpha[r]);
      float* acc = w.acc + r * t.ev_pad;
      for (int64_t c = 0; c < t.ev_pad; c += kLanes) storeu(acc + c, loadu(acc + c) * a);
    }
    w.l[r] += sum[r];
    w.m[r] = m_new;
  }
}

// acc[r][c, c + NC vectors) += sum_j p[j][r] v_j[c...] over the block's nk keys, widened V loaded once per
// key for the RB rows; `count` columns, a last partial vector read element by element. The block's sum starts
// from zero and is added to acc at the end (blocked summation, as the GEMM's k blocks): one running sum over
// 16K keys of a long context cost bf16 outputs near zero up to 6 ULP where the generic tier had 1.
template <RowType T, int RB, int NC>
void weigh_cols(const AttnTile& t, Rows& w, const uint8_t* v, int nk, int64_t c, int64_t count) {
  vf o[RB][NC];
  for (int r = 0; r < RB; ++r)
    for (int b = 0; b < NC; ++b) o[r][b] = vf{};
  const bool tail = count < NC * kLanes;
  for (int j = 0; j < nk; ++j) {
    const uint8_t* row = v + j * t.v_stride;
    vf x[NC];
    for (int b = 0; b < NC; ++b)
      x[b] = tail && (b + 1) * kLanes > count ? load_tail<T>(row, c + b * kLanes, count - b * kLanes, 0.0f)
                                              : load_kv<T>(row, c + b * kLanes);
    const float* p = w.scores + j * RB;
    for (int r = 0; r < RB; ++r) {
      const vf pr = bcast(p[r]);
      for (int b = 0; b < NC; ++b) o[r][b] += pr * x[b];
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int b = 0; b < NC; ++b) {
      float* a = w.acc + r * t.ev_pad + c + b * kLanes;
      storeu(a, loadu(a) + o[r][b]);
    }
}

template <RowType T, int RB>
void weigh_block(const AttnTile& t, Rows& w, const uint8_t* v, int nk) {
  int64_t c = 0;
  for (; c + kCols * kLanes <= t.ev; c += kCols * kLanes) weigh_cols<T, RB, kCols>(t, w, v, nk, c, kCols * kLanes);
  for (; c < t.ev; c += kLanes) weigh_cols<T, RB, 1>(t, w, v, nk, c, std::min<int64_t>(kLanes, t.ev - c));
}

template <RowType T, int RB>
void decode(const AttnTile& t) {
  // Scratch (attn_scratch_floats): q rows, then the scores, then the accumulators and the bf16 q rows.
  float* q = t.scratch;
  float* scores = t.scratch + kAttnKeyBlock * t.e_pad;
  Rows w{q, nullptr, scores, scores + kBlock * kMaxRows, {}, {}};
  static_assert(kBlock * kMaxRows <= kAttnMaxRows * kAttnKeyBlock);
  for (int r = 0; r < RB; ++r) {
    const bool used = r < t.rows;
    for (int64_t c = 0; c < t.e_pad; ++c) q[r * t.e_pad + c] = used ? t.q[r * t.e_pad + c] : 0.0f;
    for (int64_t c = 0; c < t.ev_pad; ++c) w.acc[r * t.ev_pad + c] = used ? t.acc[r * t.ev_pad + c] : 0.0f;
    w.m[r] = used ? t.m[r] : -kInf;
    w.l[r] = used ? t.l[r] : 0.0f;
  }
#if defined(__AVX512BF16__)
  constexpr bool dp = T == RowType::bf16;
  uint16_t* q16 = reinterpret_cast<uint16_t*>(w.acc + RB * t.ev_pad);
  if constexpr (dp) {
    q_to_bf16(q, RB, t.e_pad, (t.e + 31) / 32 * 32, q16);
    w.q16 = q16;
  }
#endif
  for (int64_t j0 = t.key_begin; j0 < t.key_end; j0 += kBlock) {
    const int nk = static_cast<int>(std::min<int64_t>(kBlock, t.key_end - j0));
    constexpr int KB = kLanes / RB;
    const int n_pad = (nk + KB - 1) / KB * KB;
#if defined(__AVX512BF16__)
    if constexpr (dp) {
      score_block_bf16<RB>(t, w, j0, nk);
    } else {
      score_block<T, RB>(t, w, j0, nk);
    }
#else
    score_block<T, RB>(t, w, j0, nk);
#endif
    mask_block<RB>(t, j0, nk, n_pad, scores);
    online_block<RB>(t, w, n_pad);
    weigh_block<T, RB>(t, w, t.v + j0 * t.v_stride, nk);
  }
  for (int r = 0; r < t.rows; ++r) {
    std::memcpy(t.acc + r * t.ev_pad, w.acc + r * t.ev_pad, static_cast<size_t>(t.ev_pad) * 4);
    t.m[r] = w.m[r];
    t.l[r] = w.l[r];
  }
}

template <RowType T>
void decode_rows(const AttnTile& t) {
  if (t.rows <= 1) return decode<T, 1>(t);
  if (t.rows <= 2) return decode<T, 2>(t);
  if constexpr (kMaxRows >= 8) {
    if (t.rows <= 4) return decode<T, 4>(t);
    return decode<T, 8>(t);
  } else {
    return decode<T, 4>(t);
  }
}

}  // namespace

bool attention_decode_tile(const AttnTile& t) {
  if (t.rows > kMaxRows) return false;
  with_type(t.kv_type, [&]<RowType T>() { decode_rows<T>(t); });
  return true;
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
