// The dot-product tile of grouped_mm and moe_experts, compiled once per ISA: R rows of A against NB rows of
// B^T at a time, each B^T vector loaded once per R rows and each A vector once per NB columns, f32
// accumulators in registers, one horizontal sum per output. For decode (one row per group) this streams the
// weight rows once at the memory's pace; the weight is the only large operand.
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX2__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;   // SSE2 is part of the x86-64 baseline the scalar level is built for
#endif

typedef float vf __attribute__((vector_size(kLanes * 4)));
typedef uint32_t vu __attribute__((vector_size(kLanes * 4)));
typedef uint16_t vh __attribute__((vector_size(kLanes * 2)));

template <MatType T>
inline vf load(const void* p, int64_t i) {
  if constexpr (T == MatType::f32) {
    vf v;
    std::memcpy(&v, static_cast<const float*>(p) + i, sizeof v);
    return v;
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
  const int64_t es = t.a_type == MatType::f32 ? 4 : 2;
  return static_cast<const char*>(t.a) + m * t.lda * es;
}

inline const void* row_b(const DotTile& t, int64_t n) {
  const int64_t es = t.b_type == MatType::f32 ? 4 : 2;
  return static_cast<const char*>(t.b) + n * t.ldb * es;
}

// out[m0 .. m0+R, n0 .. n0+NB).
template <MatType A, MatType B, int R, int NB>
void block(const DotTile& t, int64_t m0, int64_t n0) {
  const void* ar[R];
  const void* br[NB];
  for (int r = 0; r < R; ++r) ar[r] = row_a(t, m0 + r);
  for (int j = 0; j < NB; ++j) br[j] = row_b(t, n0 + j);
  vf acc[R][NB];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NB; ++j) acc[r][j] = vf{};
  // The next block's B^T rows are prefetched alongside: a row of a few KiB is a page or less, where the
  // hardware prefetcher stops, so without this each row starts from memory latency.
  constexpr int64_t es = B == MatType::f32 ? 4 : 2;
  constexpr int64_t line = 64 / es;   // elements per cache line
  const int64_t next = NB * t.ldb * es;
  int64_t k = 0;
  for (; k + kLanes <= t.k; k += kLanes) {
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
    for (int j = 0; j < NB; ++j) {
      float s = hsum(acc[r][j]);
      for (int64_t kk = k; kk < t.k; ++kk) s += load1<A>(ar[r], kk) * load1<B>(br[j], kk);
      t.out[(m0 + r) * t.ldo + n0 + j] = s;
    }
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
  if (a32 && b32) tile<MatType::f32, MatType::f32>(t);
  else if (a32) tile<MatType::f32, MatType::bf16>(t);
  else if (b32) tile<MatType::bf16, MatType::f32>(t);
  else tile<MatType::bf16, MatType::bf16>(t);
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
