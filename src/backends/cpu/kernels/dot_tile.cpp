// The dot-product tile of grouped_mm and moe_experts, compiled once per ISA: R rows of A against NB rows of
// B^T at a time, each B^T vector loaded once per R rows and each A vector once per NB columns, f32
// accumulators in registers, one horizontal sum per output. For decode (one row per group) this streams the
// weight rows once at the memory's pace; the weight is the only large operand.
#include <cstring>

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

inline float hsum(vf v) {
  float s = 0.0f;
  for (int j = 0; j < kLanes; ++j) s += v[j];
  return s;
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
  int64_t k = 0;
  for (; k + kLanes <= t.k; k += kLanes) {
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
  constexpr int NB = R <= 2 ? 4 : 2;
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
