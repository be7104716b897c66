// Decode GEMV inner loops, compiled once per ISA: each weight row is read once and multiplied into all M
// activation rows, with exact products and f32 accumulation. Precision policy: activations and weights enter as
// their exact values, so results are the f32-accumulated products, rounded once to the output. vdpbf16ps
// (which would round f32 activations to bf16 and treats bf16 subnormals as zero) is used only where that holds:
// fp8 weights, which are bf16 values, against activations split exactly into bf16 terms (pair_rows below).
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/fp8_bf16.h"   // pair_tables, pair_weights
#include "backends/cpu/kernels/gemv_rows.h"   // the row group, the epilogue
#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/kernels/vec.h"   // lanes, vector types, loads and stores
#include "fourfold/dtype.h"   // the out-of-line scalar conversions, for the epilogue and the scalar level

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

// FP8 codes become f32 lanes exactly (subnormals, +-max, zeros, inf and NaN included), each format by the
// cheapest exact route on Zen 4, where shifts, shuffles and conversions share two of the four vector
// pipes (FMAs use one of them too) and so set the speed of an fp8 GEMV:
// - e5m2: a code is the top byte of the f16 of the same value (inf and NaN included): one byte shuffle puts
//   16 codes in the high bytes of 16 f16 lanes, and vcvtph2ps widens them exactly.
// - e4m3fn: straight to f32 bits. The code sign-extended to 32 bits and shifted left 20 puts its exponent and
//   mantissa in the f32's low exponent and top mantissa bits (and copies of its sign in bits 27..31, which the
//   mask clears but for bit 31): that f32 is the code's value times 2^-120 (f32's bias 127 = e4m3's 7 + 120),
//   subnormal codes included, which become f32 subnormals (exact; Zen 4's FMA takes them at full speed, and no
//   DAZ is ever set; Intel's FMA takes a microcode assist on each of them (docs/decode.md step 14), which the
//   pair route of the avx512bf16 level avoids). run_gemv hands over the activations times 2^x_exp2 (112 unless they
//   are large), so each product is w * x * 2^(x_exp2 - 120), exactly what the previous f16 route's w * 2^-8 times x
//   gave; the 2^(120 - x_exp2) multiplies each row's sum of scaled blocks once, at the end. 3 integer ops per 16
//   codes, against 3 plus a zmm vcvtph2ps for the f16 route (docs/decode.md step 6).
//   e4m3fn's NaN (S.1111.111) would come out as +-480: the loop instead keeps the byte-wise max of (code | 0x80)
//   per row, a line of 64 codes at a time, 0xff exactly when a NaN code was read, and makes that row's outputs
//   NaN, which is what any NaN term does to a dot product.
constexpr uint32_t kE4m3Bits = 0x87f00000u;   // the sign and the 7 magnitude bits after the shift by 20

// How far bf16, f16 and f32 rows prefetch along their own row: into L2 far ahead, and into L1 near ahead, so that
// the line is in L1 when the loads reach it (rows<>, lone_rows): with the far one alone, a thread of an Intel
// server core read well short of its probe (docs/decode.md step 31).
constexpr int64_t kAheadBytes = 2048;
constexpr int64_t kNearBytes = 512;
// The NaN check's bytes, one register wide: a line-wide vector on a level with narrower registers (AVX2) was
// kept on the stack and moved through general registers, which bounded the e4m3 GEMV there (docs/decode.md
// step 18).
typedef uint8_t vbytes __attribute__((vector_size(kLanes * 4)));

// kLanes weights of one row from element k, as f32 (e4m3: times 2^-120, see above).
template <RowType W>
[[gnu::always_inline]] inline vf load_w(const uint8_t* row, int64_t k) {
  if constexpr (W == RowType::f32) {
    vf v;
    std::memcpy(&v, row + 4 * k, sizeof v);
    return v;
  } else if constexpr (W == RowType::bf16) {
    // Widened by one instruction (GCC 12 splits the 16-bit __builtin_convertvector into halves).
#if defined(__AVX512F__)
    const __m512i u = _mm512_maskz_cvtepu16_epi32(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * k)));
    return (vf)((vu)u << 16);
#elif defined(__AVX2__)
    return (vf)_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * k))), 16);
#else
    vh h;
    std::memcpy(&h, row + 2 * k, sizeof h);
    return (vf)(__builtin_convertvector(h, vu) << 16);
#endif
  } else if constexpr (W == RowType::f16) {
    const uint8_t* q = row + 2 * k;
#if defined(__AVX512F__)
    return (vf)_mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
#elif defined(__AVX2__)
    return (vf)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
#else
    vh h;
    std::memcpy(&h, q, sizeof h);
    vf v;
    for (int j = 0; j < kLanes; ++j) v[j] = f16_to_f32(h[j]);
    return v;
#endif
  } else if constexpr (W == RowType::e4m3) {
#if defined(__AVX512F__)
    // (The maskz forms with all lanes set: GCC 12's plain forms warn of an undefined pass-through operand.)
    const __m512i i = _mm512_maskz_cvtepi8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k)));
    return (vf)((vu)i << 20 & kE4m3Bits);
#elif defined(__AVX2__)
    const __m256i i = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + k)));
    return (vf)_mm256_and_si256(_mm256_slli_epi32(i, 20), _mm256_set1_epi32(static_cast<int>(kE4m3Bits)));
#else
    vu u;
    for (int j = 0; j < kLanes; ++j) u[j] = static_cast<uint32_t>(static_cast<int8_t>(row[k + j]));
    return (vf)((u << 20) & kE4m3Bits);
#endif
  } else {
    // Control of the byte shuffle: code j into the high byte of f16 lane j, zero (index 0x80) in the low byte.
#if defined(__AVX512F__)
    const __m256i place = _mm256_setr_epi8(-128, 0, -128, 1, -128, 2, -128, 3, -128, 4, -128, 5, -128, 6, -128, 7,
                                           -128, 8, -128, 9, -128, 10, -128, 11, -128, 12, -128, 13, -128, 14, -128, 15);
    const __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k)));
    return (vf)_mm512_maskz_cvtph_ps(0xffff, _mm256_shuffle_epi8(b, place));
#elif defined(__AVX2__)
    const __m128i place = _mm_setr_epi8(-128, 0, -128, 1, -128, 2, -128, 3, -128, 4, -128, 5, -128, 6, -128, 7);
    return (vf)_mm256_cvtph_ps(_mm_shuffle_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + k)), place));
#else
    vf v;
    for (int j = 0; j < kLanes; ++j) v[j] = f16_to_f32(static_cast<uint16_t>(row[k + j] << 8));
    return v;
#endif
  }
}

constexpr int64_t weight_size(RowType w) {
  return w == RowType::f32 ? 4 : (w == RowType::bf16 || w == RowType::f16) ? 2 : 1;
}

// The last count (< kLanes) weights from element k, zeros after them: copied into a zeroed vector's worth.
template <RowType W>
vf load_w_tail(const uint8_t* row, int64_t k, int64_t count) {
  constexpr int64_t es = weight_size(W);
  alignas(64) uint8_t buf[kLanes * es > 16 ? kLanes * es : 16] = {};
  std::memcpy(buf, row + es * k, static_cast<size_t>(count * es));
  return load_w<W>(buf, 0);
}

// Notes `count` (<= kLineBytes) e4m3 codes from q in `seen` (a no-op for the other types): the byte-wise max
// of (code | 0x80) over every register's worth of the line.
template <RowType W>
[[gnu::always_inline]] inline void note_codes(vbytes& seen, const uint8_t* q, int64_t count) {
  if constexpr (W == RowType::e4m3) {
    for (int64_t i = 0; i < count; i += sizeof(vbytes)) {
      vbytes b = {};
      std::memcpy(&b, q + i, static_cast<size_t>(count - i < int64_t{sizeof b} ? count - i : int64_t{sizeof b}));
      const vbytes t = b | 0x80;
      seen = seen > t ? seen : t;
    }
  }
}

// Whether an e4m3 NaN code went through `seen`: a vector compare, since a byte loop here costs a visible share
// of a short row's own work.
inline bool saw_nan(vbytes seen) {
  const auto hit = seen == 0xff;
  uint64_t words[sizeof(vbytes) / 8];
  std::memcpy(words, &hit, sizeof words);
  uint64_t any = 0;
  for (uint64_t w : words) any |= w;
  return any != 0;
}

// Weight rows [n0, n0 + R) against all M activation rows. The main loop takes one 64-byte line of each row
// per step and prefetches ahead (see kRowGroupAhead): the hardware prefetchers alone restart at every row and
// leave a single thread well short of the read bandwidth (shared/MACHINE.md).
// Sums run per lane over blocks of kGemvKBlock (or 128), then across blocks (where the fp8 scale applies), then
// across lanes: two-level summation keeps the f32 error of a K = 28672 row near that of a short one. Each row's
// arithmetic is the same whatever R (and whichever thread runs it), so results do not depend on the thread count.
template <RowType W, int M, int R>
void rows(const GemvPlan& p, int64_t n0) {
  constexpr int64_t es = weight_size(W);
  constexpr int64_t line = kLineBytes / es;   // weights per line
  // Two software prefetches (docs/decode.md steps 3 and 4). fp8 rows, bound more by their decode than by the loads,
  // ask for the same line of the rows R later into L1, where the next step reads it. bf16, f16 and f32 rows lose
  // that way, since R rows' lines of them land in L1 long before use; they ask instead for the lines kNearBytes
  // (into L1) and kAheadBytes (into L2) further along their own row (the next row's start near the end), which
  // keeps one thread's stream ahead of the hardware prefetchers' restarts. Rows already in the caches, or bound by
  // the FMAs (M = 4), neither gain nor lose by it.
  constexpr bool kRowGroupAhead = es == 1;

  const int64_t k_size = p.k;
  const RowGroup<R> g(p, n0);
  const uint8_t* const* w = g.w;
  const uint8_t* const* ahead = g.ahead;
  // The factor an e4m3 product is short of (see above), 2^(120 - x_exp2): a power of two, so applying it once
  // to the scaled block sums (rather than to each block's scale) gives the same bits.
  float unit = 1.0f;
  if constexpr (W == RowType::e4m3) {
    const uint32_t bits = static_cast<uint32_t>(127 + 120 - p.x_exp2) << 23;   // 0 <= x_exp2 <= 112
    std::memcpy(&unit, &bits, sizeof unit);
  }
  vf total[R][M] = {};
  vbytes seen[R] = {};
  // One step of kLanes weights from element k (count < kLanes: the zero-padded tail).
  auto step = [&](vf (&acc)[R][M], int64_t k, int64_t count) __attribute__((always_inline)) {
    vf xv[M];
    for (int m = 0; m < M; ++m) xv[m] = count == kLanes ? load_x(p.x + m * k_size, k) : load_x_tail(p.x + m * k_size, k, count);
    for (int r = 0; r < R; ++r) {
      const vf wv = count == kLanes ? load_w<W>(w[r], k) : load_w_tail<W>(w[r], k, count);
      for (int m = 0; m < M; ++m) acc[r][m] += wv * xv[m];
    }
  };
  const int64_t block = g.block;
  int64_t kb = 0;
  for (int64_t k0 = 0; k0 < k_size; k0 += block, kb += g.scale_per_block ? 1 : 0) {
    const int64_t k_end = k_size - k0 < block ? k_size : k0 + block;
    vf acc[R][M] = {};
    int64_t k = k0;
    for (; k + line <= k_end; k += line) {
      for (int r = 0; r < R; ++r) {
        if constexpr (kRowGroupAhead) __builtin_prefetch(ahead[r] + es * k);
        else {   // never faults, even past the weights
          __builtin_prefetch(w[r] + es * k + kNearBytes, 0, 3);
          __builtin_prefetch(w[r] + es * k + kAheadBytes, 0, 2);
        }
        note_codes<W>(seen[r], w[r] + k, kLineBytes);
      }
      for (int64_t j = 0; j < line; j += kLanes) step(acc, k + j, kLanes);
    }
    for (; k < k_end; k += kLanes) {
      const int64_t count = k_end - k < kLanes ? k_end - k : kLanes;
      for (int r = 0; r < R; ++r) note_codes<W>(seen[r], w[r] + k, count);
      step(acc, k, count);
    }
    g.fold(acc, total, kb);
  }
  if constexpr (W == RowType::e4m3)
    for (int r = 0; r < R; ++r)
      for (int m = 0; m < M; ++m) total[r][m] *= splat(unit);
  bool nan[R] = {};
  if constexpr (W == RowType::e4m3)
    for (int r = 0; r < R; ++r) nan[r] = saw_nan(seen[r]);
  g.store(total, nan, 1.0);
}

#if defined(__AVX512BF16__) && defined(__AVX512VBMI__)
// fp8 rows on bf16 pairs: each code becomes its exact bf16 (fp8_bf16.h: two byte lookups and its sign; NaN codes
// become bf16 NaN and e5m2's inf bf16 inf, so they propagate through the sums with no separate check). vdpbf16ps then multiplies
// 32 pairs by the activations' bf16 terms (pair_activations: one term when the activations are bf16 values, as
// in a bf16 model, three when they are any f32: the exact split), with exact products and f32 sums. About 4
// vector ops per 64 codes and term against 16 for the f32 route above, which bounded the fp8 GEMV in decode
// (docs/decode.md). vdpbf16ps treats bf16 subnormals as zero and flushes subnormal sums: the weights never are
// (e4m3's smallest is 2^-9, e5m2's 2^-16), the activations are scaled so their largest is near 2^15 (a term
// below 2^-126 is then below 2^-141 of the largest: nothing an f32 sum keeps).

// The scaffolding of the pair route's rows [n_begin, n_end) in groups of R (the count a multiple of R) against
// all M activation rows, in one loop over the groups (a call per row is slower, as for bf16 rows: lone_rows):
// the row group, its prefetch (the same line R rows later, as the fp8 rows above), each line's codes as two
// vectors of 32 bf16, blocks and epilogue are the f32 route's; `line(acc0, acc1, r, k, w0, w1)` adds row r's line
// at k to its two chains per output (one per weight vector: a lone row is otherwise bound by the latency, not by
// the loads).
template <RowType W, int M, int R, class Line>
[[gnu::always_inline]] inline void pair_rows_with(const GemvPlan& p, int64_t n_begin, int64_t n_end, const Line& line) {
  const PairTables tab = pair_tables<W == RowType::e4m3>();
  const double unscale = std::ldexp(1.0, -p.xp_exp2);   // |xp_exp2| < 300: a normal double
  for (int64_t n0 = n_begin; n0 + R <= n_end; n0 += R) {
  const RowGroup<R> g(p, n0);
  vf total[R][M] = {};
  int64_t kb = 0;
  for (int64_t k0 = 0; k0 < p.k; k0 += g.block, kb += g.scale_per_block ? 1 : 0) {
    const int64_t k_end = p.k - k0 < g.block ? p.k : k0 + g.block;
    __m512 acc0[R][M], acc1[R][M];
    for (int r = 0; r < R; ++r)
      for (int m = 0; m < M; ++m) acc0[r][m] = acc1[r][m] = _mm512_setzero_ps();
    for (int64_t k = k0; k < k_end; k += kGemvPairLine) {
      const int64_t count = k_end - k < kGemvPairLine ? k_end - k : kGemvPairLine;
      for (int r = 0; r < R; ++r) {
        __builtin_prefetch(g.ahead[r] + k);
        __m512i w0, w1;
        pair_weights(tab, g.w[r] + k, count, w0, w1);
        line(acc0, acc1, r, k, w0, w1);
      }
    }
    vf acc[R][M];
    for (int r = 0; r < R; ++r)
      for (int m = 0; m < M; ++m) acc[r][m] = (vf)acc0[r][m] + (vf)acc1[r][m];
    g.fold(acc, total, kb);
  }
  const bool nan[R] = {};
  g.store(total, nan, unscale);
  }
}

// Against the activations held as T pair terms (plan.xp): vdpbf16ps, exact products.
template <RowType W, int M, int R, int T>
void pair_rows(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  pair_rows_with<W, M, R>(p, n_begin, n_end, [&](__m512 (&acc0)[R][M], __m512 (&acc1)[R][M], int r, int64_t k, __m512i w0, __m512i w1)
                                     __attribute__((always_inline)) {
    const uint16_t* xl = p.xp + (k / kGemvPairLine) * kGemvPairLine * T;
    for (int m = 0; m < M; ++m)
      for (int t = 0; t < T; ++t) {
        const uint16_t* xt = xl + m * p.xp_ld + t * kGemvPairLine;
        acc0[r][m] = _mm512_dpbf16_ps(acc0[r][m], (__m512bh)w0, (__m512bh)_mm512_loadu_si512(xt));
        acc1[r][m] = _mm512_dpbf16_ps(acc1[r][m], (__m512bh)w1, (__m512bh)_mm512_loadu_si512(xt + 32));
      }
  });
}

// Against f32 activations (plan.xw): the bf16 weights widened to f32 (a shift and a mask) and multiplied in
// f32 FMAs, four per 64 codes, where the three-term split took six vdpbf16ps (on an Intel Xeon one zmm
// vdpbf16ps took ~0.8 ns against ~0.17 for an FMA). Products round as the f32 route's do; the weights are
// normal f32 (no microcode assist on subnormals).
template <RowType W, int M, int R>
void pair_rows_wide(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  pair_rows_with<W, M, R>(p, n_begin, n_end, [&](__m512 (&acc0)[R][M], __m512 (&acc1)[R][M], int r, int64_t k, __m512i w0, __m512i w1)
                                     __attribute__((always_inline)) {
    // (The maskz shifts with all lanes set: GCC 12's plain form warns of an undefined pass-through operand.)
    const __m512 e0 = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, w0, 16)), o0 = _mm512_castsi512_ps(_mm512_and_si512(w0, high));
    const __m512 e1 = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, w1, 16)), o1 = _mm512_castsi512_ps(_mm512_and_si512(w1, high));
    for (int m = 0; m < M; ++m) {
      const float* xl = p.xw + m * p.xw_ld + k;   // lines of 64 floats, as the codes
      acc0[r][m] = _mm512_fmadd_ps(e0, _mm512_loadu_ps(xl), acc0[r][m]);
      acc1[r][m] = _mm512_fmadd_ps(o0, _mm512_loadu_ps(xl + 16), acc1[r][m]);
      acc0[r][m] = _mm512_fmadd_ps(e1, _mm512_loadu_ps(xl + 32), acc0[r][m]);
      acc1[r][m] = _mm512_fmadd_ps(o1, _mm512_loadu_ps(xl + 48), acc1[r][m]);
    }
  });
}

// Rows [n_begin, n_end) in groups of R (the count a multiple of R).
template <RowType W, int M, int R>
void pair_rows_terms(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  if (p.xp_terms == 1) pair_rows<W, M, R, 1>(p, n_begin, n_end);
  else if (p.xw != nullptr) pair_rows_wide<W, M, R>(p, n_begin, n_end);
  else pair_rows<W, M, R, kGemvMaxTerms>(p, n_begin, n_end);
}
#endif

// Rows of at most this many bytes, at M = 1, run one at a time (see run).
constexpr int64_t kShortRowBytes = 4096;

// bf16, f16 and f32 rows one after another at M = 1, with rows<W, 1, 1>'s arithmetic (the same blocks, fold,
// lane sum and epilogue: the same bits) in one loop over the rows, each line's weight vectors loaded before its
// FMAs, so that a line's loads are in flight together and no call per row interrupts the one stream
// (docs/decode.md step 23: rows<W, 1, 1> called once per row reads well short of the read bandwidth).
template <RowType W>
void lone_rows(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  constexpr int64_t es = weight_size(W), line = kLineBytes / es;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* w = p.w + n * p.w_row_bytes;
    vf total = vf{};
    for (int64_t k0 = 0; k0 < p.k; k0 += kGemvKBlock) {
      const int64_t k_end = p.k - k0 < kGemvKBlock ? p.k : k0 + kGemvKBlock;
      vf acc = vf{};
      int64_t k = k0;
      for (; k + line <= k_end; k += line) {
        __builtin_prefetch(w + es * k + kNearBytes, 0, 3);   // as rows<>: never faults, even past the weights
        __builtin_prefetch(w + es * k + kAheadBytes, 0, 2);
        vf wv[line / kLanes];
        for (int64_t j = 0; j < line; j += kLanes) wv[j / kLanes] = load_w<W>(w, k + j);
        for (int64_t j = 0; j < line; j += kLanes) acc += wv[j / kLanes] * load_x(p.x, k + j);
      }
      for (; k < k_end; k += kLanes) {
        const int64_t count = k_end - k < kLanes ? k_end - k : kLanes;
        acc += load_w_tail<W>(w, k, count) * load_x_tail(p.x, k, count);
      }
      total += acc;
    }
    const float b = p.bias == nullptr ? 0.0f : epilogue_load(p.bias, p.bias_type, n * p.bias_stride);
    epilogue_store(p.out, p.out_type, n * p.out_n_stride, lane_sum(total) + b);
  }
}

// Rows in groups of R (independent accumulator chains and weight streams), the remainder one at a time.
// Short bf16, f16 and f32 rows at M = 1 go one at a time (fp8 rows: see run): R interleaved streams of a few lines
// each, inside one or two pages, keep the hardware prefetchers from ramping up, while one row after another is a
// single sequential stream (docs/decode.md step 5). Rows of 8 KiB and more are long streams on their own, so there
// the groups cost the prefetchers little and their independent chains win, and at M > 1 the GEMV is compute-bound
// (each weight vector feeds only M FMAs), so those keep the groups. The lone row keeps one accumulator chain: more
// chains would change the rounding of its sums for no gain that stands out of the noise (docs/decode.md steps 8,
// 23b).
template <RowType W, int M>
void run(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  constexpr int R = M <= 2 ? 4 : M <= 4 ? 2 : 1;
  bool pairs = false;
#if defined(__AVX512BF16__) && defined(__AVX512VBMI__)
  if constexpr (W == RowType::e4m3 || W == RowType::e5m2) pairs = p.xp != nullptr;
#endif
  int64_t n = n_begin;
  // Short fp8 rows on the f32 route keep their groups: a lone row there is bound by its one FMA chain, not by the
  // loads (docs/decode.md step 19). The pair route's lone row has two chains (one per weight vector), so the
  // loads bound it and it goes one at a time as bf16 rows do, one sequential stream instead of four short
  // interleaved ones (step 21; on the Intel host of step 16 the groups had won, on Zen 4 they lose).
  const bool lone = M == 1 && p.k * weight_size(W) <= kShortRowBytes && (weight_size(W) > 1 || pairs);
  if constexpr (M == 1 && weight_size(W) > 1)
    if (lone) return lone_rows<W>(p, n_begin, n_end);
  const int64_t grouped = lone ? n_begin : n_begin + (n_end - n_begin) / R * R;
#if defined(__AVX512BF16__) && defined(__AVX512VBMI__)
  if constexpr (W == RowType::e4m3 || W == RowType::e5m2)
    if (pairs) {
      pair_rows_terms<W, M, R>(p, n_begin, grouped);
      pair_rows_terms<W, M, 1>(p, grouped, n_end);
      return;
    }
#endif
  for (; n < grouped; n += R) rows<W, M, R>(p, n);
  for (; n < n_end; ++n) rows<W, M, 1>(p, n);
}

template <RowType W>
void run_m(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  switch (p.m) {
    case 1: run<W, 1>(p, n_begin, n_end); break;
    case 2: run<W, 2>(p, n_begin, n_end); break;
    case 3: run<W, 3>(p, n_begin, n_end); break;
    case 4: run<W, 4>(p, n_begin, n_end); break;
    case 5: run<W, 5>(p, n_begin, n_end); break;
    case 6: run<W, 6>(p, n_begin, n_end); break;
    case 7: run<W, 7>(p, n_begin, n_end); break;
    default: run<W, 8>(p, n_begin, n_end); break;
  }
}

}  // namespace

bool gemv_pairs_fast() {
#if defined(__AVX512BF16__) && defined(__AVX512VBMI__)
  return true;
#else
  return false;
#endif
}

void gemv_rows(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  switch (p.w_type) {
    case RowType::f32: run_m<RowType::f32>(p, n_begin, n_end); break;
    case RowType::bf16: run_m<RowType::bf16>(p, n_begin, n_end); break;
    case RowType::f16: run_m<RowType::f16>(p, n_begin, n_end); break;
    case RowType::e4m3: run_m<RowType::e4m3>(p, n_begin, n_end); break;
    case RowType::e5m2: run_m<RowType::e5m2>(p, n_begin, n_end); break;
    case RowType::e2m1: gemv_fp4_rows(p, n_begin, n_end); break;
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
