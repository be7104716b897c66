// Vector scaffolding shared by the per-ISA kernel files (kernels/*.cpp): the lane count, GCC vector types, a
// vectorized exp, and loads / stores of f32, bf16 and f16 elements as f32 lanes. Included only by kernel files,
// inside their anonymous namespace in fourfold::cpu::<level>, so every definition here is per-ISA and internal.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/kernels.h"
#include "fourfold/dtype.h"   // the out-of-line scalar f16/bf16 conversions, for tails and the scalar level

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
typedef int32_t vi __attribute__((vector_size(kLanes * 4)));
typedef uint32_t vu __attribute__((vector_size(kLanes * 4)));
typedef double vd __attribute__((vector_size(kLanes * 8)));
typedef uint16_t vh __attribute__((vector_size(kLanes * 2)));

constexpr float kInf = std::numeric_limits<float>::infinity();

inline vf splat(float v) { return vf{} + v; }

// The lanes summed pairwise (halves folded), in a fixed order.
inline float lane_sum(vf v) {
  float a[kLanes];
  std::memcpy(a, &v, sizeof a);
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int j = 0; j < width; ++j) a[j] += a[j + width];
  return a[0];
}

// exp(x) for every lane. Range reduction x = n ln2 + r, |r| <= ln2 / 2, with ln2 split in two so that n ln2_hi
// is exact (ln2_hi has 9 significant bits, |n| <= 150); exp(r) by its degree-7 Taylor polynomial (truncation
// below 6e-9 relative, ~0.05 ulp) in Horner form; 2^n applied as two factors 2^(n/2) so that results down to the
// subnormal range round once. Measured error: <= 2 ulp in f32 against a correctly rounded exp over a sweep of
// [-104, 89] including the subnormal and overflow ends (cpu_softmax_test, ExpAccuracy). Below -104 gives 0,
// above 88.8 inf, NaN stays NaN.
// kNonPositive: the caller knows x <= 0 or NaN (softmax's x - max), which drops the overflow clamp and the NaN
// select (a NaN lane still comes out NaN, as the polynomial carries it).
template <bool kNonPositive = false>
[[gnu::always_inline]] inline vf vexp(vf x) {
  vf c = x < splat(-104.0f) ? splat(-104.0f) : x;
  if constexpr (!kNonPositive) c = c > splat(88.8f) ? splat(88.8f) : c;
  const vf shifter = splat(12582912.0f);   // 1.5 * 2^23: adding it rounds to an integer
  const vf n = (c * splat(1.44269504088896341f) + shifter) - shifter;
  vf r = c - n * splat(0.693359375f);
  r = r - n * splat(-2.12194440e-4f);
  vf p = splat(1.0f / 5040);
  p = p * r + splat(1.0f / 720);
  p = p * r + splat(1.0f / 120);
  p = p * r + splat(1.0f / 24);
  p = p * r + splat(1.0f / 6);
  p = p * r + splat(0.5f);
  p = p * r + splat(1.0f);
  p = p * r + splat(1.0f);
#if defined(__AVX512F__)
  // vscalefps multiplies by 2^n with one rounding, subnormal results and overflow to inf included, as the
  // two-factor route below does in ten instructions (a NaN n gives NaN).
  // (maskz with every lane: GCC 12's unmasked form warns of an uninitialized operand.)
  const vf y = (vf)_mm512_maskz_scalef_ps(0xffff, (__m512)p, (__m512)n);
#else
  const vi ni = __builtin_convertvector(c != c ? splat(0.0f) : n, vi);
  const vi n1 = ni >> 1, n2 = ni - n1;
  const vf s1 = (vf)((n1 + 127) << 23), s2 = (vf)((n2 + 127) << 23);
  const vf y = p * s1 * s2;
#endif
  if constexpr (kNonPositive) return y;
  return x != x ? x : y;
}

// silu(x) = x / (1 + exp(-x)), PyTorch's form, so that silu(-inf) is -inf / inf = NaN as on the other tiers.
inline vf vsilu(vf x) { return x / (splat(1.0f) + vexp(-x)); }

template <RowType T>
float load1(const void* p, int64_t i) {
  if constexpr (T == RowType::f32) return static_cast<const float*>(p)[i];
  if constexpr (T == RowType::bf16) return bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
  if constexpr (T == RowType::f16) return f16_to_f32(static_cast<const uint16_t*>(p)[i]);
}

template <RowType T>
void store1(void* p, int64_t i, float v) {
  if constexpr (T == RowType::f32) static_cast<float*>(p)[i] = v;
  if constexpr (T == RowType::bf16) static_cast<uint16_t*>(p)[i] = f32_to_bf16(v);
  if constexpr (T == RowType::f16) static_cast<uint16_t*>(p)[i] = f32_to_f16(v);
}

// kLanes elements from element i.
template <RowType T>
vf load(const void* p, int64_t i) {
  vf v;
  if constexpr (T == RowType::f32) {
    std::memcpy(&v, static_cast<const float*>(p) + i, sizeof v);
  } else if constexpr (T == RowType::bf16) {
    vh h;
    std::memcpy(&h, static_cast<const uint16_t*>(p) + i, sizeof h);
    v = (vf)(__builtin_convertvector(h, vu) << 16);
  } else {
    const uint16_t* q = static_cast<const uint16_t*>(p) + i;
#if defined(__AVX512F__)
    v = (vf)_mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));   // maskz: GCC 12 warns on the unmasked form
#elif defined(__F16C__) && defined(__AVX2__)
    v = (vf)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
#else
    for (int j = 0; j < kLanes; ++j) v[j] = f16_to_f32(q[j]);
#endif
  }
  return v;
}

template <RowType T>
void store(void* p, int64_t i, vf v) {
  if constexpr (T == RowType::f32) {
    std::memcpy(static_cast<float*>(p) + i, &v, sizeof v);
  } else if constexpr (T == RowType::bf16) {
    // Round to nearest even on the bits; NaN stays a (quiet) NaN.
    const vu u = (vu)v;
    const vu rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const vu bits = v != v ? ((u >> 16) | 0x40u) : rounded;
    const vh h = __builtin_convertvector(bits, vh);
    std::memcpy(static_cast<uint16_t*>(p) + i, &h, sizeof h);
  } else {
    uint16_t* q = static_cast<uint16_t*>(p) + i;
#if defined(__AVX512F__)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q),
                        _mm512_maskz_cvtps_ph(0xffff, (__m512)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__F16C__) && defined(__AVX2__)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm256_cvtps_ph((__m256)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
    for (int j = 0; j < kLanes; ++j) q[j] = f32_to_f16(v[j]);
#endif
  }
}

// Up to kLanes elements from element i, the missing lanes set to `missing`.
template <RowType T>
vf load_tail(const void* p, int64_t i, int64_t count, float missing) {
  vf v = splat(missing);
  for (int64_t j = 0; j < count; ++j) v[j] = load1<T>(p, i + j);
  return v;
}

// Stores the first `count` lanes of v from element i.
template <RowType T>
void store_tail(void* p, int64_t i, int64_t count, vf v) {
  for (int64_t j = 0; j < count; ++j) store1<T>(p, i + j, v[j]);
}

// v rounded to T and widened back: what a tensor of T holds (the value a later step of a PyTorch composition sees).
template <RowType T>
vf rounded(vf v) {
  if constexpr (T == RowType::f32) {
    return v;
  } else {
    uint16_t held[kLanes];
    store<T>(held, 0, v);
    return load<T>(held, 0);
  }
}

// The sum of squares of a row of d elements, in double lanes: the norms' D in the thousands of f32 terms would
// cost ~1e-6 relative.
template <RowType T>
double sum_of_squares(const void* x, int64_t d) {
  vd acc = vd{};
  int64_t i = 0;
  for (; i + kLanes <= d; i += kLanes) {
    const vf v = load<T>(x, i);
    acc += __builtin_convertvector(v * v, vd);
  }
  if (i < d) {
    const vf v = load_tail<T>(x, i, d - i, 0.0f);
    acc += __builtin_convertvector(v * v, vd);
  }
  double sum = 0.0;
  for (int j = 0; j < kLanes; ++j) sum += acc[j];
  return sum;
}

// Calls fn.template operator()<T>() with the RowType known at compile time.
template <class Fn>
decltype(auto) with_type(RowType type, Fn&& fn) {
  switch (type) {
    case RowType::f32: return fn.template operator()<RowType::f32>();
    case RowType::bf16: return fn.template operator()<RowType::bf16>();
    default: return fn.template operator()<RowType::f16>();
  }
}

}  // namespace
}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
