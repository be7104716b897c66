// Decode GEMV inner loops, compiled once per ISA: each weight row is read once and multiplied into all M
// activation rows, with f32 products and f32 accumulation. Precision policy: activations and weights enter as
// their exact f32 values; no bf16 dot-product instruction (vdpbf16ps would round f32 activations to bf16 and
// treats bf16 subnormals as zero), so results are the f32-accumulated products, rounded once to the output.
#include <cstring>
#include <limits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/kernels/fp8.h"   // fp8 codes as f16 images
#include "backends/cpu/kernels/vec.h"   // lanes, vector types, loads and stores
#include "fourfold/dtype.h"   // the out-of-line scalar conversions, for the epilogue and the scalar level

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {



inline vu splatu(uint32_t v) { return vu{} + v; }

// FP8 weights through their f16 images (fp8.h): e4m3 is short of 2^8, applied with the block's scale. e4m3fn's
// NaN code is tracked instead of converted: the loop keeps the byte-wise max of (code | 0x80) per row, 0xff
// exactly when a NaN code was read, and makes that row's outputs NaN, which is what any NaN term does to a dot
// product. No f32 subnormal is ever an FP operand (those cost microcode assists).
typedef uint8_t vbytes __attribute__((vector_size(16)));

// kLanes weights of one row from element k (fp8: their f16 images, see above; `seen` tracks e4m3 NaN codes).
template <GemvWeight W>
[[gnu::always_inline]] inline vf load_w(const uint8_t* row, int64_t k, vbytes& seen) {
  if constexpr (W == GemvWeight::f32) {
    vf v;
    std::memcpy(&v, row + 4 * k, sizeof v);
    return v;
  } else if constexpr (W == GemvWeight::bf16) {
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
  } else if constexpr (W == GemvWeight::f16) {
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
  } else {
    vbytes b = {};
    std::memcpy(&b, row + k, kLanes);
    if constexpr (W == GemvWeight::e4m3) {
      const vbytes t = b | 0x80;
      seen = seen > t ? seen : t;
    }
    constexpr bool e4m3 = W == GemvWeight::e4m3;
#if defined(__AVX512F__)
    return (vf)_mm512_maskz_cvtph_ps(0xffff, fp8_f16_images16<e4m3>((__m128i)b));
#elif defined(__AVX2__)
    return (vf)_mm256_cvtph_ps(fp8_f16_images8<e4m3>((__m128i)b));
#else
    vf v;
    for (int j = 0; j < kLanes; ++j) v[j] = f16_to_f32(fp8_f16_image<e4m3>(b[j]));
    return v;
#endif
  }
}

constexpr int64_t weight_size(GemvWeight w) {
  return w == GemvWeight::f32 ? 4 : (w == GemvWeight::bf16 || w == GemvWeight::f16) ? 2 : 1;
}

// The last count (< kLanes) weights from element k, zeros after them: copied into a zeroed vector's worth.
template <GemvWeight W>
vf load_w_tail(const uint8_t* row, int64_t k, int64_t count, vbytes& seen) {
  constexpr int64_t es = weight_size(W);
  alignas(64) uint8_t buf[kLanes * es > 16 ? kLanes * es : 16] = {};
  std::memcpy(buf, row + es * k, static_cast<size_t>(count * es));
  return load_w<W>(buf, 0, seen);
}

// Whether an e4m3 NaN code went through `seen`.
inline bool saw_nan(vbytes seen) {
  for (int j = 0; j < 16; ++j)
    if (seen[j] == 0xff) return true;
  return false;
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

// Weight rows [n0, n0 + R) against all M activation rows (no software prefetch: 1 KiB ahead measured no gain).
// Sums run per lane over blocks of kGemvKBlock (or 128), then across blocks (where the fp8 scale applies), then
// across lanes: two-level summation keeps the f32 error of a K = 28672 row near that of a short one. Each row's arithmetic is the same whatever R (and whichever thread
// runs it), so results do not depend on the thread count.
template <GemvWeight W, int M, int R>
void rows(const GemvPlan& p, int64_t n0) {
  const int64_t k_size = p.k;
  const uint8_t* w[R];
  const float* scale_row[R];   // each row's scales, one per k block group
  for (int r = 0; r < R; ++r) {
    w[r] = p.w + (n0 + r) * p.w_row_bytes;
    scale_row[r] = p.scale == nullptr ? nullptr : p.scale + ((n0 + r) / p.scale_n_group) * p.scale_n_stride;
  }
  constexpr float unit = W == GemvWeight::e4m3 ? kE4m3Unit : 1.0f;
  vf total[R][M] = {};
  vbytes seen[R] = {};
  // Blocks of kGemvKBlock, or the scale's 128 when that is finer (the 128x128 recipes).
  const int64_t block = p.scale != nullptr && p.scale_k_group < kGemvKBlock ? p.scale_k_group : kGemvKBlock;
  for (int64_t k0 = 0; k0 < k_size; k0 += block) {
    const int64_t k_end = k_size - k0 < block ? k_size : k0 + block;
    vf acc[R][M] = {};
    int64_t k = k0;
    for (; k + kLanes <= k_end; k += kLanes) {
      vf xv[M];
      for (int m = 0; m < M; ++m) xv[m] = load_x(p.x + m * k_size, k);
      for (int r = 0; r < R; ++r) {
        const vf wv = load_w<W>(w[r], k, seen[r]);
        for (int m = 0; m < M; ++m) acc[r][m] += wv * xv[m];
      }
    }
    if (k < k_end) {
      vf xv[M];
      for (int m = 0; m < M; ++m) xv[m] = load_x_tail(p.x + m * k_size, k, k_end - k);
      for (int r = 0; r < R; ++r) {
        const vf wv = load_w_tail<W>(w[r], k, k_end - k, seen[r]);
        for (int m = 0; m < M; ++m) acc[r][m] += wv * xv[m];
      }
    }
    if (p.scale == nullptr) {
      for (int r = 0; r < R; ++r)
        for (int m = 0; m < M; ++m) total[r][m] += acc[r][m] * splat(unit);
    } else {
      const int64_t kb = k0 / p.scale_k_group;
      for (int r = 0; r < R; ++r) {
        const vf s = splat(scale_row[r][kb * p.scale_k_stride] * unit);
        for (int m = 0; m < M; ++m) total[r][m] += acc[r][m] * s;
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const int64_t n = n0 + r;
    const float b = p.bias == nullptr ? 0.0f : epilogue_load(p.bias, p.bias_type, n * p.bias_stride);
    const bool nan = W == GemvWeight::e4m3 && saw_nan(seen[r]);
    for (int m = 0; m < M; ++m) {
      const float y = nan ? std::numeric_limits<float>::quiet_NaN() : lane_sum(total[r][m]) + b;
      epilogue_store(p.out, p.out_type, m * p.out_m_stride + n * p.out_n_stride, y);
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
