// scaled_dot_product_attention's inner loop, compiled once per ISA: a tile of query rows that share one KV head
// against a range of keys, kAttnKeyBlock keys at a time. Each block's K and V rows are widened to f32 once
// (into L1-sized scratch) and then read by every row of the tile, which is how GQA's q heads share one pass
// over the cache; each row's scores are folded into its running max / sum / output (online softmax).
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "backends/cpu/kernels/kernels.h"
#include "fourfold/dtype.h"   // the out-of-line scalar f16/bf16 conversions, for tails and f16

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX2__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;   // SSE2, the x86-64 baseline
#endif
static_assert(kAttnPad % kLanes == 0 && kAttnKeyBlock % kLanes == 0);

typedef float vf __attribute__((vector_size(kLanes * 4)));
typedef int32_t vi __attribute__((vector_size(kLanes * 4)));
typedef uint32_t vu __attribute__((vector_size(kLanes * 4)));
typedef uint16_t vh __attribute__((vector_size(kLanes * 2)));

constexpr float kInf = std::numeric_limits<float>::infinity();

inline vf splat(float v) { return vf{} + v; }
inline vf loadu(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storeu(float* p, vf v) { std::memcpy(p, &v, sizeof v); }

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

float mask_value(const uint8_t* p, RowType type) {
  if (type == RowType::f32) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return type == RowType::bf16 ? bf16_to_f32(h) : f16_to_f32(h);
}

// scores[j] = scale * q . k_j for the keys of `groups` groups of kLanes scratch rows.
void score_row(const float* q, const float* ks, int64_t e_pad, int groups, float scale, float* scores) {
  for (int g = 0; g < groups; ++g) {
    const float* kb = ks + g * kLanes * e_pad;
    vf acc[kLanes] = {};
    for (int64_t c = 0; c < e_pad; c += kLanes) {
      const vf qv = loadu(q + c);
      for (int j = 0; j < kLanes; ++j) acc[j] += qv * loadu(kb + j * e_pad + c);
    }
    fold_down<kLanes>(acc);
    storeu(scores + g * kLanes, acc[0] * splat(scale));
  }
}

// out[0, NB vectors) += sum_j p[j] * v_j, the accumulators held in registers across the keys.
template <int NB>
void weigh_values(const float* p, const float* vs, int64_t ev_pad, int nk, float* out) {
  vf o[NB];
  for (int b = 0; b < NB; ++b) o[b] = loadu(out + b * kLanes);
  for (int j = 0; j < nk; ++j) {
    const vf pj = splat(p[j]);
    const float* row = vs + j * ev_pad;
    for (int b = 0; b < NB; ++b) o[b] += pj * loadu(row + b * kLanes);
  }
  for (int b = 0; b < NB; ++b) storeu(out + b * kLanes, o[b]);
}

constexpr int kValueVectors = 8;   // output vectors held in registers while the keys stream past

void weigh_row(const float* p, const float* vs, int64_t ev_pad, int nk, float* out) {
  int64_t c = 0;
  for (; c + kValueVectors * kLanes <= ev_pad; c += kValueVectors * kLanes)
    weigh_values<kValueVectors>(p, vs + c, ev_pad, nk, out + c);
  for (; c < ev_pad; c += kLanes) weigh_values<1>(p, vs + c, ev_pad, nk, out + c);
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

}  // namespace

void attention_tile(const AttnTile& t) {
  float* ks = t.scratch;
  float* vs = ks + kAttnKeyBlock * t.e_pad;
  float* scores = vs + kAttnKeyBlock * t.ev_pad;
  for (int64_t j0 = t.key_begin; j0 < t.key_end; j0 += kAttnKeyBlock) {
    const int nk = static_cast<int>(std::min<int64_t>(kAttnKeyBlock, t.key_end - j0));
    const int groups = (nk + kLanes - 1) / kLanes;
    const int n_pad = groups * kLanes;
    for (int j = 0; j < nk; ++j) {
      widen(t.k + (j0 + j) * t.k_stride, t.kv_type, t.e, t.e_pad, ks + j * t.e_pad);
      widen(t.v + (j0 + j) * t.v_stride, t.kv_type, t.ev, t.ev_pad, vs + j * t.ev_pad);
    }
    if (nk < n_pad) std::memset(ks + nk * t.e_pad, 0, static_cast<size_t>((n_pad - nk) * t.e_pad) * 4);
    for (int r = 0; r < t.rows; ++r) {
      if (t.key_limit[r] <= j0) continue;   // causal: the whole block lies past this row's last key
      float* s = scores + r * kAttnKeyBlock;
      score_row(t.q + r * t.e_pad, ks, t.e_pad, groups, t.scale, s);
      mask_scores(t, r, j0, nk, n_pad, s);
      float* acc = t.acc + r * t.ev_pad;
      if (online_update(s, n_pad, t.m[r], t.l[r], acc, t.ev_pad)) weigh_row(s, vs, t.ev_pad, nk, acc);
    }
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
