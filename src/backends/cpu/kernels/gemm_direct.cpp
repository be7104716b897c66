// The GEMM's direct path, compiled once per ISA: few rows of x against a bf16 or fp8 weight W [N, K] (K
// contiguous: MoE experts, a checkpoint's [out, in] layout) as C^T = W x^T, with the weight's rows read where they
// lie, never packed (fp8 rows decoded a chunk at a time into L1, below), and x's rows packed once (gemm_pack_direct: pair panels of 32 rows, bf16 rows as one term, f32 rows as
// three exact bf16 terms). Packing W instead (the packed path) costs a read and a write of the whole weight for
// the few rows that use it, a large share of an MoE prefill's time (docs/gemm.md).
//
// The blocks, by level:
// - amx: 32 weight rows x 32 rows of x on four C tiles, the weight rows loaded as A tiles (TDPBF16PS).
// - avx512bf16: 8 weight rows x 32 (or 24, 16, 8) rows of x in 16 (8 + 8 ymm, 8, 8 ymm) accumulators: each
//   weight pair (k, k + 1) broadcast as one dword from its row and vdpbf16ps'd against the vector of 16 (8) rows'
//   pairs at that step (bf16 rows), or widened to two f32 and FMA'd against the rows' f32 elements (f32 rows,
//   packed as f32 here).
// - the others: a scalar emulation of the same sums (tests run the path on every host).
//
// Precision: every product of a bf16 weight with a term is exact in f32 and the sums are f32 (the vdpbf16ps
// block in blocks of kChunkSteps pairs, added in order); the units treat subnormal inputs and results as zero,
// so a term below 2^-126 is dropped, as on the pair path.
#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__AVX512BF16__) || (defined(__AMX_TILE__) && defined(__AMX_BF16__))
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/amx_tile_config.h"
#include "backends/cpu/kernels/fp8_bf16.h"
#include "backends/cpu/kernels/kernels.h"
#include "fourfold/dtype.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

constexpr int64_t kDepthStep = 32;   // K must be a multiple of this: one A tile row of 32 bf16

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
constexpr int64_t kBlockRows = 32;   // weight rows per block: two A tiles
#else
constexpr int64_t kBlockRows = 8;
#endif

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
constexpr int64_t kTileRows = 16;
// C^T [32 weight rows, 32 x rows] of the direct path: A tiles straight from the weight rows w (row stride w_ld
// bytes), B tiles from one 32-row group's term panels (`steps` pairs each, term t at x + t * panel).
void direct_block(const uint8_t* w, int64_t w_ld, const uint32_t* x, int64_t steps, int64_t panel, int terms,
                  float* ct) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const int64_t chunks = steps / kTileRows;
  for (int64_t ch = 0; ch < chunks; ++ch) {
    _tile_loadd(4, w + ch * kDepthStep * 2, w_ld);
    _tile_loadd(5, w + kTileRows * w_ld + ch * kDepthStep * 2, w_ld);
    for (int t = 0; t < terms; ++t) {
      const uint32_t* bk = x + t * panel + ch * kTileRows * 32;
      _tile_loadd(6, bk, 128);
      _tile_loadd(7, bk + 16, 128);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, ct, 128);
  _tile_stored(1, ct + 16, 128);
  _tile_stored(2, ct + 16 * 32, 128);
  _tile_stored(3, ct + 16 * 32 + 16, 128);
}
#endif

#if defined(__AVX512BF16__)
// Steps summed in one chain before the chain is added to the block's total: two-level summation, as the packed
// path's kc blocks, so that a K = 4096 row's f32 error stays near a short one's.
constexpr int64_t kChunkSteps = 256;

// The blocks' vectors: 16 rows of x in a zmm, or 8 in a ymm for what is left of a group past its whole 16s. Zen 4
// runs a zmm op as two ymm halves, so a ymm vdpbf16ps costs half a zmm one: with uneven MoE experts, vectors of
// 16 rows waste about twice the lane work that vectors of 8 do on the rows past a group's whole 16s
// (docs/gemm.md).
struct Zmm {
  using F = __m512;
  using I = __m512i;
  static constexpr int kRows = 16;
  static F zero() { return _mm512_setzero_ps(); }
  static F loadf(const float* p) { return _mm512_loadu_ps(p); }
  static void storef(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static I loadi(const uint32_t* p) { return _mm512_loadu_si512(p); }
  static I set1(uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }
  static F dot(F acc, I w, I x) { return _mm512_dpbf16_ps(acc, (__m512bh)w, (__m512bh)x); }
  static F fma(F a, F b, F acc) { return _mm512_fmadd_ps(a, b, acc); }
  // (maskz with every lane: GCC 12's unmasked shift warns of an undefined pass-through operand.)
  static F even(I pair) { return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, pair, 16)); }
  static F odd(I pair) { return _mm512_castsi512_ps(_mm512_and_si512(pair, set1(0xffff0000u))); }
};

struct Ymm {
  using F = __m256;
  using I = __m256i;
  static constexpr int kRows = 8;
  static F zero() { return _mm256_setzero_ps(); }
  static F loadf(const float* p) { return _mm256_loadu_ps(p); }
  static void storef(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static I loadi(const uint32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static I set1(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
  static F dot(F acc, I w, I x) { return _mm256_dpbf16_ps(acc, (__m256bh)w, (__m256bh)x); }
  static F fma(F a, F b, F acc) { return _mm256_fmadd_ps(a, b, acc); }
  static F even(I pair) { return _mm256_castsi256_ps(_mm256_slli_epi32(pair, 16)); }
  static F odd(I pair) { return _mm256_castsi256_ps(_mm256_and_si256(pair, set1(0xffff0000u))); }
};

// The vector blocks' scaffolding: out[r * ldo + Vec::kRows v + j] = the sum over `steps` of what step(acc, p)
// adds to acc[r][v] (kBlockRows weight rows, V vectors of rows of x), in chunks of kChunkSteps; each step reads 4
// bytes of every weight row (row stride w_ld), whose line lasts 16 steps: the one 1 KiB further along each row is
// asked for as a line starts.
template <class Vec, int V, class Step>
[[gnu::always_inline]] inline void direct_block(const uint8_t* w, int64_t w_ld, int64_t steps, float* out, int64_t ldo,
                                                const Step& step) {
  for (int64_t p0 = 0; p0 < steps; p0 += kChunkSteps) {
    const int64_t p1 = std::min(steps, p0 + kChunkSteps);
    typename Vec::F acc[kBlockRows][V];
    for (auto& row : acc)
      for (auto& a : row) a = Vec::zero();
    for (int64_t p = p0; p < p1; ++p) {
      if ((p & 15) == 0)
        for (int r = 0; r < kBlockRows; ++r) _mm_prefetch(reinterpret_cast<const char*>(w + r * w_ld + 4 * p + 1024), _MM_HINT_T0);
      step(acc, p);
    }
    for (int r = 0; r < kBlockRows; ++r)
      for (int v = 0; v < V; ++v) {
        float* dst = out + r * ldo + Vec::kRows * v;
        Vec::storef(dst, p0 == 0 ? acc[r][v] : Vec::add(Vec::loadf(dst), acc[r][v]));
      }
  }
}

// bf16 weights (one step per pair of k) against T terms of bf16 pair panels (term t at x + t * term_stride, the
// step's 32 pairs at + 32 p): each weight pair broadcast as one dword where it lies, vdpbf16ps'd.
template <class Vec, int V, int T>
void dot_block(const uint8_t* w, int64_t w_ld, const uint32_t* x, int64_t steps, int64_t term_stride, float* out,
               int64_t ldo) {
  using Acc = typename Vec::F[kBlockRows][V];
  direct_block<Vec, V>(w, w_ld, steps, out, ldo, [&](Acc& acc, int64_t p) __attribute__((always_inline)) {
    typename Vec::I xv[T][V];
    for (int t = 0; t < T; ++t)
      for (int v = 0; v < V; ++v) xv[t][v] = Vec::loadi(x + t * term_stride + p * 32 + Vec::kRows * v);
#pragma GCC unroll 8
    for (int r = 0; r < kBlockRows; ++r) {
      uint32_t pair;
      std::memcpy(&pair, w + r * w_ld + 4 * p, 4);
      const typename Vec::I b = Vec::set1(pair);
      for (int t = 0; t < T; ++t)
        for (int v = 0; v < V; ++v) acc[r][v] = Vec::dot(acc[r][v], b, xv[t][v]);
    }
  });
}

// bf16 weights against f32 rows of x held as f32 (pack_terms: the slots of terms 0 and 1 hold each pair's even
// and odd element): each weight pair broadcast, widened to its two exact f32 (a shift, a mask) and multiplied in
// f32 FMAs, two per vector of rows, where three bf16 terms would take three vdpbf16ps per pair. (Widening each
// chunk of the weight rows into an L1 panel first and broadcasting f32 from it is slower on Zen 4: the extra
// pass costs more than the widening in registers; docs/gemm.md.) Products round as the packed path's FMAs do.
template <class Vec, int V>
void fma_block(const uint8_t* w, int64_t w_ld, const uint32_t* x, int64_t steps, int64_t term_stride, float* out,
               int64_t ldo) {
  const float* even = reinterpret_cast<const float*>(x);
  const float* odd = reinterpret_cast<const float*>(x + term_stride);
  using Acc = typename Vec::F[kBlockRows][V];
  direct_block<Vec, V>(w, w_ld, steps, out, ldo, [&](Acc& acc, int64_t p) __attribute__((always_inline)) {
    typename Vec::F xe[V], xo[V];
    for (int v = 0; v < V; ++v) {
      xe[v] = Vec::loadf(even + p * 32 + Vec::kRows * v);
      xo[v] = Vec::loadf(odd + p * 32 + Vec::kRows * v);
    }
#pragma GCC unroll 8
    for (int r = 0; r < kBlockRows; ++r) {
      uint32_t pair;
      std::memcpy(&pair, w + r * w_ld + 4 * p, 4);
      const typename Vec::I b = Vec::set1(pair);
      const typename Vec::F we = Vec::even(b), wo = Vec::odd(b);
      for (int v = 0; v < V; ++v) {
        acc[r][v] = Vec::fma(we, xe[v], acc[r][v]);
        acc[r][v] = Vec::fma(wo, xo[v], acc[r][v]);
      }
    }
  });
}

// A group's rows [lane0, lane0 + Vec::kRows * V) on the dot (one term) or FMA (f32 rows) block.
template <class Vec, int V>
void vector_block(const uint8_t* w, int64_t w_ld, const DirectRows& x, const uint32_t* xg, int64_t steps, int lane0,
                  float* ct) {
  if (x.terms == 1) dot_block<Vec, V, 1>(w, w_ld, xg + lane0, steps, x.term_stride, ct + lane0, 32);
  else fma_block<Vec, V>(w, w_ld, xg + lane0, steps, x.term_stride, ct + lane0, 32);
}
#endif

// C^T [kBlockRows, 32] of one block (ct[r * 32 + j]: weight row r, row j of the group), `valid` rows of x.
void block(const uint8_t* w, int64_t w_ld, const DirectRows& x, const uint32_t* xg, int64_t steps, int64_t valid,
           float* ct) {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  (void)valid;
  direct_block(w, w_ld, xg, steps, x.term_stride, x.terms, ct);
#elif defined(__AVX512BF16__)
  // Rows in vectors of 16, and a last 8 in a ymm (rows past `valid` are zeros, their sums unused).
  if (valid > 24) {
    vector_block<Zmm, 2>(w, w_ld, x, xg, steps, 0, ct);
  } else if (valid > 16) {
    vector_block<Zmm, 1>(w, w_ld, x, xg, steps, 0, ct);
    vector_block<Ymm, 1>(w, w_ld, x, xg, steps, 16, ct);
  } else if (valid > 8) {
    vector_block<Zmm, 1>(w, w_ld, x, xg, steps, 0, ct);
  } else {
    vector_block<Ymm, 1>(w, w_ld, x, xg, steps, 0, ct);
  }
#else
  // The same sums one product pair at a time.
  for (int64_t n = 0; n < kBlockRows; ++n)
    for (int64_t r = 0; r < valid; ++r) {
      float sum = 0.0f;
      const auto* wr = reinterpret_cast<const uint16_t*>(w + n * w_ld);
      for (int64_t p = 0; p < steps; ++p)
        for (int t = 0; t < x.terms; ++t) {
          const uint32_t pair = xg[t * x.term_stride + p * 32 + r];
          sum += bf16_to_f32(wr[2 * p]) * bf16_to_f32(static_cast<uint16_t>(pair)) +
                 bf16_to_f32(wr[2 * p + 1]) * bf16_to_f32(static_cast<uint16_t>(pair >> 16));
        }
      ct[n * 32 + r] = sum;
    }
#endif
}

// Rows [m0, m0 + rows) of a (bf16 or f32, any strides), depth k (a multiple of 32), as `terms` bf16 terms in
// the pair panels of gemm_pack_direct_rows (a's rows as B's columns): dst[((t * groups + g) * steps + p) * 32 + r]
// holds the pair (2p, 2p + 1) of term t of row 32g + r (zeros past rows), steps = k / 2. An f32 value v splits
// exactly into v = t0 + t1 + t2 (written to `split` first): each term is the top 8 significant bits of what the
// terms before it left, so every product with a bf16 weight is exact in f32.
void pack_terms(const GemmOperand& a, int64_t m0, int64_t rows, int64_t k, int terms, uint16_t* split, uint32_t* dst) {
  const int64_t panel = (rows + 31) / 32 * 32 * (k / 2);
#if defined(__AVX512BF16__) && !(defined(__AMX_TILE__) && defined(__AMX_BF16__))
  // f32 rows for fma_block: the term slots 0 and 1 hold the f32 bits of elements 2p and 2p + 1.
  if (a.type == RowType::f32) {
    (void)terms, (void)split;
    const int64_t steps = k / 2;
    for (int64_t g = 0; g * 32 < rows; ++g)
      for (int64_t r = 0; r < 32; ++r)
        for (int64_t p = 0; p < steps; ++p)
          for (int64_t t = 0; t < 2; ++t) {
            uint32_t v = 0;
            if (g * 32 + r < rows) std::memcpy(&v, a.data + ((m0 + g * 32 + r) * a.rs + (2 * p + t) * a.cs) * 4, 4);
            dst[t * panel + (g * steps + p) * 32 + r] = v;
          }
    return;
  }
#endif
  if (a.type == RowType::bf16) {
    const GemmOperand rows_as_columns{a.data + m0 * a.rs * 2, RowType::bf16, a.cs, a.rs};
    gemm_pack_direct_rows(rows_as_columns, k, rows, reinterpret_cast<float*>(dst));
    return;
  }
  for (int64_t i = 0; i < rows; ++i) {
    const uint8_t* row = a.data + (m0 + i) * a.rs * 4;
    uint16_t* out = split + i * k;
    for (int64_t d = 0; d < k; ++d) {
      uint32_t v;
      std::memcpy(&v, row + d * a.cs * 4, 4);
      for (int t = 0; t < 3; ++t) {
        const uint32_t top = v & 0xffff0000u;
        out[t * rows * k + d] = static_cast<uint16_t>(top >> 16);
        float fv, ft;
        std::memcpy(&fv, &v, 4);
        std::memcpy(&ft, &top, 4);
        fv -= ft;
        std::memcpy(&v, &fv, 4);
      }
    }
  }
  for (int t = 0; t < terms; ++t) {
    const GemmOperand term{reinterpret_cast<const uint8_t*>(split + t * rows * k), RowType::bf16, 1, k};
    gemm_pack_direct_rows(term, k, rows, reinterpret_cast<float*>(dst + t * panel));
  }
}

// fp8 weights (scaled_linear's, an FP8 checkpoint's experts): each block's rows are decoded kFp8Chunk codes at a
// time into bf16 rows in L1 (exact: every e4m3fn and e5m2 value is a bf16 value, fp8_bf16.h) and run through the
// bf16 weights' block; each chunk's sums are multiplied by the chunk's dequantization scale before they join the
// total (the decode GEMV's order: a block's exact sum, then its scale). Against the packed path, which widens codes
// times scales into f32 panels for FMAs, this keeps bf16 rows on vdpbf16ps (AMX tiles at the amx level) at the cost
// of a decode per 8 (32) weight rows and chunk, about 9 vector ops per 64 codes against 2 x 32 vdpbf16ps per
// group of 32 rows of x.
constexpr int64_t kFp8Chunk = 128;   // codes per row and chunk: one scale block along K (a scale group's divisor)

template <bool E4m3>
void decode_block_rows(const uint8_t* w, int64_t w_ld, int64_t count, uint16_t* dst) {
#if defined(__AVX512BF16__) && defined(__AVX512VBMI__)
  const PairTables t = pair_tables<E4m3>();
#endif
  for (int64_t r = 0; r < kBlockRows; ++r) {
    const uint8_t* q = w + r * w_ld;
    uint16_t* d = dst + r * kFp8Chunk;
    // The hardware prefetchers see kBlockRows short streams; ask for each row's lines 1 KiB (8 chunks) ahead.
    // (2 KiB ahead into L2 is slower: docs/gemm.md, fp8 weights on the direct path.)
    __builtin_prefetch(q + 1024, 0, 3);
    __builtin_prefetch(q + 1024 + 64, 0, 3);
    int64_t i = 0;
#if defined(__AVX512BF16__) && defined(__AVX512VBMI__)
    for (; i + 64 <= count; i += 64) pair_weights_in_order(t, q + i, d + i);
#endif
    for (; i < count; ++i) d[i] = fp8_bf16_table<E4m3>()[q[i]];
  }
}

float fp8_scale(const GemmOperand& b, int64_t k0, int64_t n) {
  return b.scale == nullptr ? 1.0f : b.scale[k0 / b.scale_rg * b.scale_rs + n / b.scale_cg * b.scale_cs];
}

// tot[n][j] (+)= ct[n][j] * scale[n] over a block's C^T (restrict: the loop is vectorized, 2 FMAs per weight row).
void fold_chunk(const float* __restrict ct, const float* __restrict scale, bool first, float* __restrict tot) {
  for (int64_t n = 0; n < kBlockRows; ++n) {
    const float s = scale[n];
    if (first)
      for (int64_t j = 0; j < 32; ++j) tot[n * 32 + j] = ct[n * 32 + j] * s;
    else
      for (int64_t j = 0; j < 32; ++j) tot[n * 32 + j] += ct[n * 32 + j] * s;
  }
}

void fp8_tile(const DirectRows& x, const GemmOperand& b, int64_t n0, int64_t n1, int64_t k, float* c, int64_t ldc) {
  const int64_t steps = k / 2, groups = (x.rows + 31) / 32, w_ld = b.cs;
  alignas(64) uint16_t wb[kBlockRows * kFp8Chunk];
  alignas(64) float ct[kBlockRows * 32];
  thread_local std::vector<float> totals;   // C^T of every group for the current block of weight rows
  totals.resize(static_cast<size_t>(groups * kBlockRows * 32));
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  load_eight_full_tiles();
#endif
  for (int64_t nb = n0; nb < n1; nb += kBlockRows) {
    for (int64_t k0 = 0; k0 < k; k0 += kFp8Chunk) {
      const int64_t kc = std::min(kFp8Chunk, k - k0);
      const uint8_t* w = b.data + nb * w_ld + k0;
      if (b.type == RowType::e4m3) decode_block_rows<true>(w, w_ld, kc, wb);
      else decode_block_rows<false>(w, w_ld, kc, wb);
      float scale[kBlockRows];
      for (int64_t n = 0; n < kBlockRows; ++n) scale[n] = fp8_scale(b, k0, nb + n);
      for (int64_t g = 0; g < groups; ++g) {
        block(reinterpret_cast<const uint8_t*>(wb), kFp8Chunk * 2, x, x.data + (g * steps + k0 / 2) * 32, kc / 2,
              std::min<int64_t>(32, x.rows - g * 32), ct);
        fold_chunk(ct, scale, k0 == 0, totals.data() + g * kBlockRows * 32);
      }
    }
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t r = 0; r < std::min<int64_t>(32, x.rows - g * 32); ++r)
        for (int64_t n = 0; n < kBlockRows; ++n) c[(g * 32 + r) * ldc + nb - n0 + n] = totals[static_cast<size_t>((g * kBlockRows + n) * 32 + r)];
  }
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  _tile_release();
#endif
}

}  // namespace

bool gemm_direct_fast() {
#if (defined(__AMX_TILE__) && defined(__AMX_BF16__)) || defined(__AVX512BF16__)
  return true;
#else
  return false;
#endif
}

// Rows up to the packed bytes that stay in L2 while the weight streams past them: the AMX Xeons' 2 MiB
// (kDirectMaxTermBytes) on tiles; elsewhere half of Zen 4's 1 MiB, since the vdpbf16ps block reads every packed
// group once per 8 weight rows (the tiles once per 32).
int64_t gemm_direct_max_rows(RowType a, int64_t k) {
  const int64_t per_row = direct_terms(a) * 2 * k;
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  return kDirectMaxTermBytes / per_row;
#else
  return (INT64_C(512) << 10) / per_row / 32 * 32;
#endif
}

// fp8 weights with any scale whose groups along K are whole kFp8Chunk chunks (tensorwise, rowwise, 128-wide
// blocks), or none.
bool gemm_direct_covers(const GemmOperand& a, const GemmOperand& b, int64_t rows, int64_t cols, int64_t k) {
  const bool fp8 = b.type == RowType::e4m3 || b.type == RowType::e5m2;
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  // The tiles take f32 rows as three bf16 terms, and an infinite weight times a term that is zero gives NaN where
  // the product is infinite: e5m2's infinities keep f32 rows on the packed path here (FMAs on the widened codes).
  if (b.type == RowType::e5m2 && a.type == RowType::f32) return false;
#endif
  const bool weight_ok = fp8 ? b.scale == nullptr || b.scale_rg == kGemmWholeGroup || b.scale_rg % kFp8Chunk == 0
                             : b.type == RowType::bf16 && b.scale == nullptr;
  return weight_ok && b.rs == 1 && a.scale == nullptr && (a.type == RowType::bf16 || a.type == RowType::f32) && k > 0 &&
         k % kDepthStep == 0 && cols % 32 == 0 && rows <= gemm_direct_max_rows(a.type, k);
}

void gemm_pack_direct(const GemmOperand& a, int64_t m0, int64_t rows, int64_t k, float* dst, float* split) {
  pack_terms(a, m0, rows, k, direct_terms(a.type), reinterpret_cast<uint16_t*>(split), reinterpret_cast<uint32_t*>(dst));
}

// Weight rows in blocks of kBlockRows (outer), each against every group of 32 rows of x (inner): the block's rows
// stay in L1 while the packed groups stream from L2.
void gemm_tile_direct(const DirectRows& x, const GemmOperand& b, int64_t n0, int64_t n1, int64_t k, float* c,
                      int64_t ldc) {
  if (b.type == RowType::e4m3 || b.type == RowType::e5m2) {
    fp8_tile(x, b, n0, n1, k, c, ldc);
    return;
  }
  const int64_t steps = k / 2, w_ld = b.cs * 2;
  const uint8_t* w = b.data + n0 * w_ld;
  alignas(64) float ct[kBlockRows * 32];
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  load_eight_full_tiles();
#endif
  for (int64_t nb = 0; nb < n1 - n0; nb += kBlockRows)
    for (int64_t g = 0; g * 32 < x.rows; ++g) {
      const int64_t valid = std::min<int64_t>(32, x.rows - g * 32);
      block(w + nb * w_ld, w_ld, x, x.data + g * steps * 32, steps, valid, ct);
      for (int64_t r = 0; r < valid; ++r)
        for (int64_t n = 0; n < kBlockRows; ++n) c[(g * 32 + r) * ldc + nb + n] = ct[n * 32 + r];
    }
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  _tile_release();
#endif
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
