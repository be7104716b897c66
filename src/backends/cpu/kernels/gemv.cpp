// Decode GEMV inner loops, compiled once per ISA: each weight row is read once and multiplied into all M
// activation rows, with f32 products and f32 accumulation (no bf16 dot-product instructions: those treat
// denormals as zero and would round f32 activations to bf16; the loop is bandwidth-bound at M <= 4 anyway).
#include <cstring>
#include <limits>

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/kernels.h"
#include "fourfold/dtype.h"   // the out-of-line scalar conversions, for the epilogue and the scalar level

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX2__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;   // SSE2, the x86-64 baseline
#endif

typedef float vf __attribute__((vector_size(kLanes * 4)));
typedef uint32_t vu __attribute__((vector_size(kLanes * 4)));
typedef uint16_t vh __attribute__((vector_size(kLanes * 2)));
typedef uint8_t vb __attribute__((vector_size(kLanes)));

inline vf splat(float v) { return vf{} + v; }
inline vu splatu(uint32_t v) { return vu{} + v; }

// FP8 to f32 on the bits: the magnitude bits shifted into f32's exponent and mantissa make a float 2^(127 - bias)
// too small (an f32 subnormal for an fp8 subnormal), and one exact multiply restores it, subnormals included.
// The largest e4m3fn value (448) and e5m2 value (57344) are normal f32 numbers after the multiply; the special
// codes (e4m3fn S.1111.111 NaN; e5m2 exponent 11111 inf/NaN) are patched in.
inline vf e4m3_to_f32(vu b) {
  const vu mag = b & 0x7fu;
  const vf v = (vf)(mag << 20) * splat(0x1p120f);
  const vu bits = ((vu)v | ((b & 0x80u) << 24));
  return (vf)(mag == 0x7fu ? splatu(0x7fc00000u) : bits);
}
inline vf e5m2_to_f32(vu b) {
  const vu mag = b & 0x7fu;
  const vf v = (vf)(mag << 21) * splat(0x1p112f);
  const vu special = (mag << 21) | 0x7f800000u;   // mantissa 0: inf, else NaN
  const vu bits = (mag >= 0x7cu ? special : (vu)v) | ((b & 0x80u) << 24);
  return (vf)bits;
}

// kLanes weights of one row from element k.
template <GemvWeight W>
[[gnu::always_inline]] inline vf load_w(const uint8_t* row, int64_t k) {
  if constexpr (W == GemvWeight::f32) {
    vf v;
    std::memcpy(&v, row + 4 * k, sizeof v);
    return v;
  } else if constexpr (W == GemvWeight::bf16) {
    vh h;
    std::memcpy(&h, row + 2 * k, sizeof h);
    return (vf)(__builtin_convertvector(h, vu) << 16);
  } else if constexpr (W == GemvWeight::f16) {
    const uint8_t* q = row + 2 * k;
#if defined(__AVX512F__)
    return (vf)_mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
#elif defined(__F16C__) && defined(__AVX2__)
    return (vf)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
#else
    vh h;
    std::memcpy(&h, q, sizeof h);
    vf v;
    for (int j = 0; j < kLanes; ++j) v[j] = f16_to_f32(h[j]);
    return v;
#endif
  } else {
    vb b;
    std::memcpy(&b, row + k, sizeof b);
    const vu u = __builtin_convertvector(b, vu);
    if constexpr (W == GemvWeight::e4m3) return e4m3_to_f32(u);
    else return e5m2_to_f32(u);
  }
}

constexpr int64_t weight_size(GemvWeight w) {
  return w == GemvWeight::f32 ? 4 : (w == GemvWeight::bf16 || w == GemvWeight::f16) ? 2 : 1;
}

// The last count (< kLanes) weights from element k, zeros after them: copied into a zeroed vector's worth.
template <GemvWeight W>
vf load_w_tail(const uint8_t* row, int64_t k, int64_t count) {
  constexpr int64_t es = weight_size(W);
  alignas(64) uint8_t buf[kLanes * es] = {};
  std::memcpy(buf, row + es * k, static_cast<size_t>(count * es));
  return load_w<W>(buf, 0);
}

inline vf load_x(const float* x, int64_t k) {
  vf v;
  std::memcpy(&v, x + k, sizeof v);
  return v;
}

inline vf load_x_tail(const float* x, int64_t k, int64_t count) {
  vf v = vf{};
  for (int64_t j = 0; j < count; ++j) v[j] = x[k + j];
  return v;
}

// The lanes summed pairwise (halves folded), in a fixed order.
inline float lane_sum(vf v) {
  float a[kLanes];
  std::memcpy(a, &v, sizeof a);
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int j = 0; j < width; ++j) a[j] += a[j + width];
  return a[0];
}

float epilogue_load(const void* p, RowType type, int64_t i) {
  switch (type) {
    case RowType::f32: return static_cast<const float*>(p)[i];
    case RowType::bf16: return bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
    default: return f16_to_f32(static_cast<const uint16_t*>(p)[i]);
  }
}

void epilogue_store(void* p, RowType type, int64_t i, float v) {
  switch (type) {
    case RowType::f32: static_cast<float*>(p)[i] = v; break;
    case RowType::bf16: static_cast<uint16_t*>(p)[i] = f32_to_bf16(v); break;
    default: static_cast<uint16_t*>(p)[i] = f32_to_f16(v); break;
  }
}

// Weight rows [n0, n0 + R) against all M activation rows. Sums run per lane over blocks of kGemvKBlock, then
// across blocks (where the fp8 scale applies), then across lanes: two-level summation keeps the f32 error of a
// K = 28672 row near that of a 128-term one. Each row's arithmetic is the same whatever R (and whichever thread
// runs it), so results do not depend on the thread count.
template <GemvWeight W, int M, int R>
void rows(const GemvPlan& p, int64_t n0) {
  const int64_t k_size = p.k;
  const uint8_t* w[R];
  for (int r = 0; r < R; ++r) w[r] = p.w + (n0 + r) * p.w_row_bytes;
  vf total[R][M] = {};
  for (int64_t k0 = 0; k0 < k_size; k0 += kGemvKBlock) {
    const int64_t k_end = k_size - k0 < kGemvKBlock ? k_size : k0 + kGemvKBlock;
    vf acc[R][M] = {};
    int64_t k = k0;
    for (; k + kLanes <= k_end; k += kLanes) {
      vf xv[M];
      for (int m = 0; m < M; ++m) xv[m] = load_x(p.x + m * k_size, k);
      for (int r = 0; r < R; ++r) {
        const vf wv = load_w<W>(w[r], k);
        for (int m = 0; m < M; ++m) acc[r][m] += wv * xv[m];
      }
    }
    if (k < k_end) {
      vf xv[M];
      for (int m = 0; m < M; ++m) xv[m] = load_x_tail(p.x + m * k_size, k, k_end - k);
      for (int r = 0; r < R; ++r) {
        const vf wv = load_w_tail<W>(w[r], k, k_end - k);
        for (int m = 0; m < M; ++m) acc[r][m] += wv * xv[m];
      }
    }
    if (p.scale == nullptr) {
      for (int r = 0; r < R; ++r)
        for (int m = 0; m < M; ++m) total[r][m] += acc[r][m];
    } else {
      const int64_t kb = k0 / p.scale_k_group;
      for (int r = 0; r < R; ++r) {
        const int64_t n = n0 + r;
        const vf s = splat(p.scale[(n / p.scale_n_group) * p.scale_n_stride + kb * p.scale_k_stride]);
        for (int m = 0; m < M; ++m) total[r][m] += acc[r][m] * s;
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const int64_t n = n0 + r;
    const float b = p.bias == nullptr ? 0.0f : epilogue_load(p.bias, p.bias_type, n * p.bias_stride);
    for (int m = 0; m < M; ++m) {
      epilogue_store(p.out, p.out_type, m * p.out_m_stride + n * p.out_n_stride, lane_sum(total[r][m]) + b);
    }
  }
}

// Rows in groups of R (independent accumulator chains and weight streams), the remainder one at a time.
template <GemvWeight W, int M>
void run(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  constexpr int R = M <= 2 ? 4 : M <= 4 ? 2 : 1;
  int64_t n = n_begin;
  for (; n + R <= n_end; n += R) rows<W, M, R>(p, n);
  for (; n < n_end; ++n) rows<W, M, 1>(p, n);
}

template <GemvWeight W>
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

void gemv_rows(const GemvPlan& p, int64_t n_begin, int64_t n_end) {
  switch (p.w_type) {
    case GemvWeight::f32: run_m<GemvWeight::f32>(p, n_begin, n_end); break;
    case GemvWeight::bf16: run_m<GemvWeight::bf16>(p, n_begin, n_end); break;
    case GemvWeight::f16: run_m<GemvWeight::f16>(p, n_begin, n_end); break;
    case GemvWeight::e4m3: run_m<GemvWeight::e4m3>(p, n_begin, n_end); break;
    case GemvWeight::e5m2: run_m<GemvWeight::e5m2>(p, n_begin, n_end); break;
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
