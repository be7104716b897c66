// scaled_dot_product_attention's general tile (more than 8 query rows: prefill), compiled once per ISA: the query
// rows of one KV head against a range of keys, FlashAttention-2 style on the GEMM register tile (gemm.cpp). Q is
// packed once; per block of kAttnKeyBlock keys, S = Q K^T and acc += P V are GEMM blocks on packed K and V
// panels (each block's K and V read once from memory and then from cache by every row of the tile: how GQA's q
// heads share one pass over the KV cache), and each row's scores are folded into its running max / sum / output
// in between (online softmax). Causal rows a block has passed are not computed.
//   bf16 K at the AVX512-BF16 level: S by vdpbf16ps on bf16 pair panels (bf16 x bf16 products are exact in f32).
//   Otherwise, and V always: f32 panels (f32, bf16 and f16 widen exactly while packing).
// Tiles of at most 8 rows (4 at the scalar level), decode's, go to attention_decode.cpp instead.
// Precision: the softmax weights P stay f32 and multiply V in f32, as in the decode tile. (Rounding P to bf16 for
// a vdpbf16ps P.V, as FlashAttention's second GEMM does, costs the end-to-end logits a large drop in PSNR in
// `fourfold check`: docs/decode.md, attention.)
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/kernels/attention_shared.h"   // prefetch, mask values, bf16 q rows; the decode tile
#include "backends/cpu/kernels/vec.h"   // lanes, vector types, loads and stores

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

static_assert(kAttnPad % kLanes == 0 && kAttnKeyBlock % kLanes == 0);

inline vf loadu(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storeu(float* p, vf v) { std::memcpy(p, &v, sizeof v); }

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



// The tile's scratch regions, each 64-byte aligned (the GEMM micro-kernel loads its B panels aligned).
struct Scratch {
  float *q_panels, *k_panels, *v_panels, *p_panels, *scores;
  uint16_t* q16;
};

Scratch carve(const AttnTile& t) {
  float* at = t.scratch;
  auto take = [&](int64_t floats) {
    float* p = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(at) + 63) & ~uintptr_t{63});
    at = p + floats;
    return p;
  };
  Scratch s{};
  s.q_panels = take(kAttnPanelRows * t.e_pad);
  s.k_panels = take(kAttnKeyBlock * t.e_pad);
  s.v_panels = take(kAttnKeyBlock * (t.ev_pad + 16));
  s.p_panels = take(kAttnPanelRows * kAttnKeyBlock);
  s.scores = take(kAttnMaxRows * kAttnKeyBlock);
  s.q16 = reinterpret_cast<uint16_t*>(take(kAttnMaxRows * (t.e_pad + 16) / 2));
  return s;
}

}  // namespace

void attention_tile(const AttnTile& t) {
  if (attention_decode_tile(t)) return;   // a few rows (decode): streams K and V once, see attention_decode.cpp
  const Scratch w = carve(t);
  const int64_t es = t.kv_type == RowType::f32 ? 4 : 2;
  // bf16 K at the AVX512-BF16 level: Q K^T on bf16 pairs (vdpbf16ps); else on f32 panels.
  const bool pairs = t.kv_type == RowType::bf16 && gemm_pairs_fast();
#if defined(__AVX512BF16__)
  if (pairs) {
    const int64_t e32 = (t.e + 31) / 32 * 32;
    q_to_bf16(t.q, t.rows, t.e_pad, e32, w.q16);
    gemm_pack_a_pairs({reinterpret_cast<const uint8_t*>(w.q16), RowType::bf16, e32, 1}, 0, t.rows, 0, t.e,
                      w.q_panels);
  }
#endif
  if (!pairs)
    gemm_pack_a({reinterpret_cast<const uint8_t*>(t.q), RowType::f32, t.e_pad, 1}, 0, t.rows, 0, t.e, w.q_panels);
  const int64_t q_steps = pairs ? (t.e + 1) / 2 : t.e;   // floats per Q panel row
  const int mr = gemm_mr();
  for (int64_t j0 = t.key_begin; j0 < t.key_end; j0 += kAttnKeyBlock) {
    const int nk = static_cast<int>(std::min<int64_t>(kAttnKeyBlock, t.key_end - j0));
    const int n_pad = (nk + kLanes - 1) / kLanes * kLanes;
    // The rows this block touches: causal rows come position-major, so the ones already past are a prefix.
    int lo = 0, hi = t.rows;
    while (lo < hi && t.key_limit[lo] <= j0) ++lo;
    while (hi > lo && t.key_limit[hi - 1] <= j0) --hi;
    if (lo == hi) continue;
    prefetch_next_block(t, j0);
    // S = Q K^T for rows [lo rounded down to a panel, hi): K^T's column j is key j0 + j.
    const GemmOperand kt{t.k + j0 * t.k_stride, t.kv_type, 1, t.k_stride / es};
    const int s0 = lo / mr * mr;
    if (pairs) {
      gemm_pack_b_pairs(kt, 0, t.e, 0, nk, w.k_panels);
      gemm_block_pairs(w.q_panels + s0 * q_steps, w.k_panels, hi - s0, nk, t.e, w.scores + s0 * kAttnKeyBlock,
                       kAttnKeyBlock, false);
    } else {
      gemm_pack_b(kt, 0, t.e, 0, nk, w.k_panels);
      gemm_block(w.q_panels + s0 * q_steps, w.k_panels, hi - s0, nk, t.e, w.scores + s0 * kAttnKeyBlock,
                 kAttnKeyBlock, false);
    }
    // P = exp(S - running max), row by row; a row this block adds nothing to gets P = 0.
    const vf scale = splat(t.scale);
    for (int r = lo; r < hi; ++r) {
      float* s = w.scores + r * kAttnKeyBlock;
      for (int j = 0; j < n_pad; j += kLanes) storeu(s + j, loadu(s + j) * scale);
      mask_scores(t, r, j0, nk, n_pad, s);
      if (t.key_limit[r] <= j0 || !online_update(s, n_pad, t.m[r], t.l[r], t.acc + r * t.ev_pad, t.ev_pad))
        std::memset(s, 0, static_cast<size_t>(n_pad) * 4);
    }
    // acc += P V, P and V in f32 (see the precision note at the top).
    gemm_pack_a({reinterpret_cast<const uint8_t*>(w.scores), RowType::f32, kAttnKeyBlock, 1}, lo, hi - lo, 0, nk,
                w.p_panels);
    gemm_pack_b({t.v + j0 * t.v_stride, t.kv_type, t.v_stride / es, 1}, 0, nk, 0, t.ev, w.v_panels);
    gemm_block(w.p_panels, w.v_panels, hi - lo, t.ev, nk, t.acc + lo * t.ev_pad, t.ev_pad, true);
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
