// The dot-product tile of grouped_mm and moe_experts, compiled once per ISA: R rows of A against NB rows of
// B^T at a time, each B^T vector loaded once per R rows and each A vector once per NB columns, f32
// accumulators in registers, one horizontal sum per output. For decode (one row per group) this streams the
// weight rows once at the memory's pace; the weight is the only large operand.
#include <algorithm>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/kernels/vec.h"   // lanes, vector types, loads and stores

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {



typedef uint8_t vb __attribute__((vector_size(kLanes)));

constexpr int64_t elem_size(MatType t) { return t == MatType::f32 ? 4 : t == MatType::bf16 ? 2 : 1; }

// e4m3fn bits -> f32: the 7 magnitude bits placed at the top of an f32's exponent and mantissa make a float
// 2^-120 times the value (subnormals included: they land on f32 subnormals), then the sign; S.1111.111 is NaN.
inline vf e4m3_to_f32(vu u) {
  const vu mag = u & 0x7fu;
  const vf scaled = (vf)(mag << 20) * (vf{} + 0x1p120f);
  const vu bits = (vu)scaled | ((u & 0x80u) << 24);
  return mag == 0x7fu ? (vf)(vu{} + 0x7fc00000u) : (vf)bits;
}

template <MatType T>
inline vf load(const void* p, int64_t i) {
  if constexpr (T == MatType::f32) {
    vf v;
    std::memcpy(&v, static_cast<const float*>(p) + i, sizeof v);
    return v;
  } else if constexpr (T == MatType::e4m3) {
    vb b;
    std::memcpy(&b, static_cast<const uint8_t*>(p) + i, sizeof b);
    return e4m3_to_f32(__builtin_convertvector(b, vu));
  } else {
    vh h;
    std::memcpy(&h, static_cast<const uint16_t*>(p) + i, sizeof h);
    return (vf)(__builtin_convertvector(h, vu) << 16);
  }
}

template <MatType T>
inline float load1(const void* p, int64_t i) {
  if constexpr (T == MatType::f32) {
    return static_cast<const float*>(p)[i];
  } else if constexpr (T == MatType::e4m3) {
    return e4m3_to_f32(vu{} + static_cast<const uint8_t*>(p)[i])[0];
  } else {
    const uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t*>(p)[i]) << 16;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
}

// A tree of shuffles: a lane-by-lane loop is a chain of kLanes dependent adds, which for short K (the down
// projection's 768) cost as much as the dot product itself.
inline float hsum(vf v) {
  typedef float v4 __attribute__((vector_size(16)));
#if defined(__AVX512F__) || defined(__AVX2__)
  typedef float v8 __attribute__((vector_size(32)));
  v8 h8;
#if defined(__AVX512F__)
  v8 lo8, hi8;
  std::memcpy(&lo8, &v, sizeof lo8);
  std::memcpy(&hi8, reinterpret_cast<const char*>(&v) + sizeof lo8, sizeof hi8);
  h8 = lo8 + hi8;
#else
  h8 = v;
#endif
  v4 lo, hi;
  std::memcpy(&lo, &h8, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&h8) + sizeof lo, sizeof hi);
  const v4 h4 = lo + hi;
#else
  const v4 h4 = v;
#endif
  return (h4[0] + h4[2]) + (h4[1] + h4[3]);
}

inline const void* row_a(const DotTile& t, int64_t m) {
  if (t.a_rows != nullptr) return t.a_rows[m];
  return static_cast<const char*>(t.a) + m * t.lda * elem_size(t.a_type);
}

inline const void* row_b(const DotTile& t, int64_t n) {
  return static_cast<const char*>(t.b) + n * t.ldb * elem_size(t.b_type);
}

// acc[r][j] += sum over k in [k0, k1) of a[r][k] * b[j][k] (f32 lanes; the scalar tail into tail[r][j]).
template <MatType A, MatType B, int R, int NB>
[[gnu::always_inline]] inline void accumulate(const void* const* ar, const void* const* br, int64_t next, int64_t k0,
                                              int64_t k1, vf (&acc)[R][NB], float (&tail)[R][NB]) {
  // The next block's B^T rows are prefetched alongside: a row of a few KiB is a page or less, where the
  // hardware prefetcher stops, so without this each row starts from memory latency.
  constexpr int64_t es = elem_size(B);
  constexpr int64_t line = 64 / es;   // elements per cache line
  int64_t k = k0;
  for (; k + kLanes <= k1; k += kLanes) {
    if (k % line == 0)
      for (int j = 0; j < NB; ++j) __builtin_prefetch(static_cast<const char*>(br[j]) + next + k * es);
    vf bv[NB];
    for (int j = 0; j < NB; ++j) bv[j] = load<B>(br[j], k);
    for (int r = 0; r < R; ++r) {
      const vf av = load<A>(ar[r], k);
      for (int j = 0; j < NB; ++j) acc[r][j] += av * bv[j];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NB; ++j)
      for (int64_t kk = k; kk < k1; ++kk) tail[r][j] += load1<A>(ar[r], kk) * load1<B>(br[j], kk);
}

// out[m0 .. m0+R, n0 .. n0+NB). An e4m3 B is summed per 128-wide K block, each block's sum times its scale.
template <MatType A, MatType B, int R, int NB>
void block(const DotTile& t, int64_t m0, int64_t n0) {
  const void* ar[R];
  const void* br[NB];
  for (int r = 0; r < R; ++r) ar[r] = row_a(t, m0 + r);
  for (int j = 0; j < NB; ++j) br[j] = row_b(t, n0 + j);
  const int64_t next = NB * t.ldb * elem_size(B);
  float total[R][NB] = {};
  const int64_t step = B == MatType::e4m3 ? 128 : (t.k > 0 ? t.k : 1);
  for (int64_t k0 = 0; k0 < t.k; k0 += step) {
    vf acc[R][NB];
    float tail[R][NB] = {};
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < NB; ++j) acc[r][j] = vf{};
    accumulate<A, B, R, NB>(ar, br, next, k0, std::min(t.k, k0 + step), acc, tail);
    for (int j = 0; j < NB; ++j) {
      float scale = 1.0f;
      if constexpr (B == MatType::e4m3) scale = t.b_scale[((t.b_row0 + n0 + j) / 128) * t.scale_ld + k0 / 128];
      for (int r = 0; r < R; ++r) total[r][j] += (hsum(acc[r][j]) + tail[r][j]) * scale;
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NB; ++j) t.out[(m0 + r) * t.ldo + n0 + j] = total[r][j];
}

// Rows m0 .. m0+R over every column: NB columns at a time (as many accumulators as the registers hold), the
// leftover columns one at a time.
template <MatType A, MatType B, int R>
void row_block(const DotTile& t, int64_t m0) {
  constexpr int NB = R == 1 ? 8 : R == 2 ? 4 : 2;
  int64_t n = 0;
  for (; n + NB <= t.cols; n += NB) block<A, B, R, NB>(t, m0, n);
  for (; n < t.cols; ++n) block<A, B, R, 1>(t, m0, n);
}

template <MatType A, MatType B>
void tile(const DotTile& t) {
  int64_t m = 0;
  for (; m + 4 <= t.rows; m += 4) row_block<A, B, 4>(t, m);
  switch (t.rows - m) {
    case 3: row_block<A, B, 3>(t, m); break;
    case 2: row_block<A, B, 2>(t, m); break;
    case 1: row_block<A, B, 1>(t, m); break;
    default: break;
  }
}

}  // namespace

void dot_tile(const DotTile& t) {
  const bool a32 = t.a_type == MatType::f32, b32 = t.b_type == MatType::f32;
  if (t.b_type == MatType::e4m3) {
    if (a32) tile<MatType::f32, MatType::e4m3>(t);
    else tile<MatType::bf16, MatType::e4m3>(t);
  } else if (a32 && b32) tile<MatType::f32, MatType::f32>(t);
  else if (a32) tile<MatType::f32, MatType::bf16>(t);
  else if (b32) tile<MatType::bf16, MatType::f32>(t);
  else tile<MatType::bf16, MatType::bf16>(t);
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
