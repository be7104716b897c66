// GEMM pieces, compiled once per ISA: packing any-layout f32/bf16/f16/fp8 operands into f32 panels, the
// register-tile micro-kernel, and the epilogue (bias, rounding to the output dtype, any output strides).
//
// Precision policy: every input converts exactly to f32 while packing (bf16 and f16 are subsets of f32), the
// products accumulate in f32 FMAs (in k order within a kc block, blocks added in order), and the result rounds
// once to the output dtype after the bias is added in f32. At the avx512bf16 level, when both operands are bf16,
// the driver takes the pair path instead: operands stay bf16, packed as (k, k+1) pairs, and vdpbf16ps adds both
// products to the f32 accumulator (twice the FMA path's products per instruction). The products of bf16 values
// are exact in f32 either way; vdpbf16ps differs from two FMAs only in treating subnormal inputs and results as
// zero (DAZ/FTZ), i.e. by less than 2^-126 per product. Other levels implement the pair path with f32 FMAs (used
// only by tests).
//
// FP8 operands (scaled_linear's weight, scaled_mm's a and b) are converted in registers while packing (fp8.h:
// exact f16 images, NaN kept) and each panel is multiplied by its dequantization scales right after it is
// written, while it is in L1/L2: a panel element is fp8 value * scale rounded once to f32, exactly the value the
// generic tier's dequantized copy holds, so the product is an f32 GEMM of the dequantized operands without the
// copy.
#include <cstring>

#if defined(__AVX512F__) || defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/fp8.h"
#include "backends/cpu/kernels/kernels.h"
#include "fourfold/dtype.h"   // bf16 conversions (inline); out-of-line f16 ones for the scalar level

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

// The register tile: MR rows (broadcast from A) by two vectors of columns (loaded from B). AVX-512: 12 x 32 uses
// 24 of the 32 zmm registers for accumulators; AVX2: 6 x 16 uses 12 of 16 ymm; the scalar level (SSE2, no FMA)
// 4 x 8 uses 8 of 16 xmm.
#if defined(__AVX512F__)
constexpr int kLanes = 16;
constexpr int kMr = 12;
#elif defined(__AVX2__)
constexpr int kLanes = 8;
constexpr int kMr = 6;
#else
constexpr int kLanes = 4;
constexpr int kMr = 4;
#endif
constexpr int kNr = 2 * kLanes;

typedef float vf __attribute__((vector_size(kLanes * 4)));

// A lane-wide copy of v (vf{} + v would add +0.0, one more instruction per FMA pair: it turns -0 into +0).
inline vf splat(float v) {
#if defined(__AVX512F__)
  return (vf)_mm512_set1_ps(v);
#elif defined(__AVX2__)
  return (vf)_mm256_set1_ps(v);
#else
  return vf{v, v, v, v};
#endif
}

inline float half_to_f32(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return f16_to_f32(h);
#endif
}

inline uint16_t f32_to_half(float f) {
#if defined(__F16C__)
  return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
  return f32_to_f16(f);
#endif
}

constexpr bool is_fp8(RowType t) { return t == RowType::e4m3 || t == RowType::e5m2; }

// Element i as f32; fp8: its f16 image (e4m3: the value times 2^-8, see fp8.h), NaN kept.
template <RowType T>
inline float load(const uint8_t* base, int64_t i) {
  if constexpr (is_fp8(T)) {
    return fp8_image_f32<T == RowType::e4m3, true>(base[i]);
  } else if constexpr (T == RowType::f32) {
    float v;
    std::memcpy(&v, base + i * 4, 4);
    return v;
  } else {
    uint16_t h;
    std::memcpy(&h, base + i * 2, 2);
    return T == RowType::bf16 ? bf16_to_f32(h) : half_to_f32(h);
  }
}

template <RowType T>
inline void store(uint8_t* base, int64_t i, float v) {
  if constexpr (T == RowType::f32) {
    std::memcpy(base + i * 4, &v, 4);
  } else {
    const uint16_t h = T == RowType::bf16 ? f32_to_bf16(v) : f32_to_half(v);
    std::memcpy(base + i * 2, &h, 2);
  }
}

inline int64_t type_size(RowType t) { return t == RowType::f32 ? 4 : is_fp8(t) ? 1 : 2; }

#if defined(__AVX2__)
// Eight consecutive elements at base + i elements, as f32.
template <RowType T>
inline __m256 load8(const uint8_t* base, int64_t i) {
  if constexpr (is_fp8(T)) {
    return fp8_load8<T == RowType::e4m3, true>(base + i);
  } else if constexpr (T == RowType::f32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(base) + i);
  } else {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(reinterpret_cast<const uint16_t*>(base) + i));
    if constexpr (T == RowType::bf16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    else return _mm256_cvtph_ps(h);
  }
}

// Rows r = 0..7 of src (row stride rs elements), depth d .. d+7, written as dst[j * ld + r].
template <RowType T>
inline void transpose_8x8(const uint8_t* src, int64_t rs, int64_t d, float* dst, int64_t ld) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = load8<T>(src, i * rs + d);
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_ps(dst + j * ld, _mm256_permute2f128_ps(u[j], u[j + 4], 0x20));
    _mm256_storeu_ps(dst + (j + 4) * ld, _mm256_permute2f128_ps(u[j], u[j + 4], 0x31));
  }
}

// The same for rows 0..3.
template <RowType T>
inline void transpose_4x8(const uint8_t* src, int64_t rs, int64_t d, float* dst, int64_t ld) {
  __m256 r[4];
  for (int i = 0; i < 4; ++i) r[i] = load8<T>(src, i * rs + d);
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 u[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
                       _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE)};
  for (int j = 0; j < 4; ++j) {
    _mm_storeu_ps(dst + j * ld, _mm256_castps256_ps128(u[j]));
    _mm_storeu_ps(dst + (j + 4) * ld, _mm256_extractf128_ps(u[j], 1));
  }
}
#endif

// An fp8 operand's scales in packing terms: element (row, d) (absolute indices, row the non-reduction one)
// counts as its image times s[(row / rgroup) * rstride + (d / dgroup) * dstride] * unit.
struct PanelScale {
  const float* s;           // null: no scaling
  int64_t rgroup, rstride, dgroup, dstride;
  float unit;               // kE4m3Unit for e4m3 images, else 1
  int64_t row0, d0;         // the absolute indices of the packed block's element (0, 0)
};

// Multiplies one packed panel (rows first_row .. + count of the block, depth steps) by its scales: per run of
// depth steps in one scale group, one factor per panel row (padding rows keep their zeros).
template <int R>
void scale_panel(float* panel, int64_t first_row, int64_t count, int64_t depth, const PanelScale& ps) {
  for (int64_t d = 0; d < depth;) {
    const int64_t group = (ps.d0 + d) / ps.dgroup;
    const int64_t end = ps.dgroup >= kGemmWholeGroup ? depth
                        : (group + 1) * ps.dgroup - ps.d0 < depth ? (group + 1) * ps.dgroup - ps.d0
                                                                   : depth;
    alignas(64) float f[R];
    for (int r = 0; r < R; ++r)
      f[r] = r < count ? ps.s[((ps.row0 + first_row + r) / ps.rgroup) * ps.rstride + group * ps.dstride] * ps.unit
                       : 1.0f;
    for (; d < end; ++d)
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) panel[d * R + r] *= f[r];
  }
}

// Panels of R "rows" (the non-reduction index) by `depth` reduction steps: dst[(g * depth + d) * R + r] = element
// (g * R + r, d), which lies at base + (row * rs + d * ds) elements; rows past `rows` are zero. Both the
// depth-contiguous layout (a linear weight, x) and the row-contiguous one (a matmul b, a transposed grad) read
// their source in order. fp8: each panel is scaled right after it is written (ps).
template <RowType T, int R>
void pack_panels(const uint8_t* base, int64_t rs, int64_t ds, int64_t rows, int64_t depth, float* dst,
                 const PanelScale& ps) {
  for (int64_t g = 0; g * R < rows; ++g, dst += depth * R) {
    const int64_t count = rows - g * R < R ? rows - g * R : R;
    const uint8_t* src = base + g * R * rs * type_size(T);
    if (ds == 1 && count == R) {
      // Eight depth steps of every row at a time: reads stay sequential per row, writes fill whole panel rows.
      int64_t d = 0;
#if defined(__AVX2__)
      // Vector transposes: 8 (then 4) rows x 8 depth steps per block.
      for (; d + 8 <= depth; d += 8) {
        int r = 0;
        for (; r + 8 <= R; r += 8) transpose_8x8<T>(src + r * rs * type_size(T), rs, d, dst + d * R + r, R);
        for (; r + 4 <= R; r += 4) transpose_4x8<T>(src + r * rs * type_size(T), rs, d, dst + d * R + r, R);
        for (; r < R; ++r)
          for (int j = 0; j < 8; ++j) dst[(d + j) * R + r] = load<T>(src, r * rs + d + j);
      }
#endif
      for (; d + 8 <= depth; d += 8)
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
          for (int j = 0; j < 8; ++j) dst[(d + j) * R + r] = load<T>(src, r * rs + d + j);
      for (; d < depth; ++d)
        for (int r = 0; r < R; ++r) dst[d * R + r] = load<T>(src, r * rs + d);
    } else {
      for (int64_t d = 0; d < depth; ++d) {
        float* row = dst + d * R;
        int64_t r = 0;
        if (rs == 1) {
#if defined(__AVX2__)
          if constexpr (is_fp8(T))   // a row-contiguous fp8 operand (scaled_mm's b [K, N]): 8 codes per load
            for (; r + 8 <= count; r += 8) _mm256_storeu_ps(row + r, load8<T>(src, d * ds + r));
#endif
          for (; r < count; ++r) row[r] = load<T>(src, d * ds + r);
        } else {
          for (; r < count; ++r) row[r] = load<T>(src, r * rs + d * ds);
        }
        for (; r < R; ++r) row[r] = 0.0f;
      }
    }
    if (ps.s != nullptr) scale_panel<R>(dst, g * R, count, depth, ps);
  }
}

template <int R>
void pack(const GemmOperand& op, int64_t r0, int64_t rows, int64_t rs, int64_t d0, int64_t depth, int64_t ds,
          float* dst, const PanelScale& ps) {
  const uint8_t* base = op.data + (r0 * rs + d0 * ds) * type_size(op.type);
  switch (op.type) {
    case RowType::f32: return pack_panels<RowType::f32, R>(base, rs, ds, rows, depth, dst, ps);
    case RowType::bf16: return pack_panels<RowType::bf16, R>(base, rs, ds, rows, depth, dst, ps);
    case RowType::e4m3: return pack_panels<RowType::e4m3, R>(base, rs, ds, rows, depth, dst, ps);
    case RowType::e5m2: return pack_panels<RowType::e5m2, R>(base, rs, ds, rows, depth, dst, ps);
    default: return pack_panels<RowType::f16, R>(base, rs, ds, rows, depth, dst, ps);
  }
}

// The packing view of op's scales when the packed rows are op's rows (A) or its columns (B).
PanelScale panel_scale(const GemmOperand& op, bool rows_are_columns, int64_t row0, int64_t d0) {
  const float unit = op.type == RowType::e4m3 ? kE4m3Unit : 1.0f;
  if (op.scale == nullptr) {
    // An fp8 operand without a scale still needs its e4m3 unit: a one-element scale of 1.
    static const float one = 1.0f;
    if (unit == 1.0f) return {nullptr, 1, 0, 1, 0, 1.0f, 0, 0};
    return {&one, kGemmWholeGroup, 0, kGemmWholeGroup, 0, unit, row0, d0};
  }
  if (rows_are_columns) return {op.scale, op.scale_cg, op.scale_cs, op.scale_rg, op.scale_rs, unit, row0, d0};
  return {op.scale, op.scale_rg, op.scale_rs, op.scale_cg, op.scale_cs, unit, row0, d0};
}

// One reduction step of the register tile. f32 panels: a holds kMr floats, b kNr floats. Pair panels: a holds
// kMr and b kNr uint32s, each two bf16 values of consecutive k (the even one in the low half), and the step adds
// both products: vdpbf16ps where the level has it, else the same two products as f32 FMAs (odd k first, as
// vdpbf16ps orders them).
template <bool Pairs>
[[gnu::always_inline]] inline void step(const float* a, const float* b, vf* acc0, vf* acc1) {
  const vf b0 = *reinterpret_cast<const vf*>(b);
  const vf b1 = *reinterpret_cast<const vf*>(b + kLanes);
  if constexpr (!Pairs) {
#pragma GCC unroll 16
    for (int i = 0; i < kMr; ++i) {
      const vf ai = splat(a[i]);
      acc0[i] += ai * b0;
      acc1[i] += ai * b1;
    }
  } else {
#if defined(__AVX512BF16__)
#pragma GCC unroll 16
    for (int i = 0; i < kMr; ++i) {
      const __m512bh ai = (__m512bh)_mm512_set1_ps(a[i]);
      acc0[i] = (vf)_mm512_dpbf16_ps((__m512)acc0[i], ai, (__m512bh)b0);
      acc1[i] = (vf)_mm512_dpbf16_ps((__m512)acc1[i], ai, (__m512bh)b1);
    }
#else
    typedef uint32_t vu __attribute__((vector_size(kLanes * 4)));
    const vu hi = vu{} + 0xffff0000u;
    const vf b0_lo = (vf)((vu)b0 << 16), b0_hi = (vf)((vu)b0 & hi);
    const vf b1_lo = (vf)((vu)b1 << 16), b1_hi = (vf)((vu)b1 & hi);
#pragma GCC unroll 16
    for (int i = 0; i < kMr; ++i) {
      uint32_t bits;
      std::memcpy(&bits, a + i, 4);
      const float a_lo = bf16_to_f32(static_cast<uint16_t>(bits)), a_hi = bf16_to_f32(static_cast<uint16_t>(bits >> 16));
      acc0[i] += splat(a_hi) * b0_hi;
      acc1[i] += splat(a_hi) * b1_hi;
      acc0[i] += splat(a_lo) * b0_lo;
      acc1[i] += splat(a_lo) * b1_lo;
    }
#endif
  }
}

// The register tile over one block of `steps` reduction steps: acc[i][h] holds row i, columns h * kLanes ..
// + kLanes; panels are 64-byte aligned (the driver allocates them so and every panel step is a multiple of
// the vector).
template <bool Pairs>
[[gnu::always_inline]] inline void micro(const float* a, const float* b, int64_t steps, float* c, int64_t ldc,
                                         bool accumulate) {
  vf acc0[kMr], acc1[kMr];
#pragma GCC unroll 16
  for (int i = 0; i < kMr; ++i) acc0[i] = acc1[i] = vf{};
  for (int64_t k = 0; k < steps; ++k, a += kMr, b += kNr) step<Pairs>(a, b, acc0, acc1);
#pragma GCC unroll 16
  for (int i = 0; i < kMr; ++i) {
    float* ci = c + i * ldc;
    if (accumulate) {
      vf c0, c1;
      std::memcpy(&c0, ci, sizeof(vf));
      std::memcpy(&c1, ci + kLanes, sizeof(vf));
      acc0[i] += c0;
      acc1[i] += c1;
    }
    std::memcpy(ci, &acc0[i], sizeof(vf));
    std::memcpy(ci + kLanes, &acc1[i], sizeof(vf));
  }
}

template <bool Pairs>
void block(const float* pa, const float* pb, int64_t mc, int64_t nc, int64_t steps, float* c, int64_t ldc,
           bool accumulate) {
  // B's panel (steps x nr) stays in L1/L2 while every A panel of the block streams past it.
  for (int64_t j = 0; j < nc; j += kNr) {
    const float* b = pb + j * steps;
    const int64_t nr = nc - j < kNr ? nc - j : kNr;
    for (int64_t i = 0; i < mc; i += kMr) {
      const float* a = pa + i * steps;
      const int64_t mr = mc - i < kMr ? mc - i : kMr;
      float* ci = c + i * ldc + j;
      if (mr == kMr && nr == kNr) {
        micro<Pairs>(a, b, steps, ci, ldc, accumulate);
        continue;
      }
      // Edge tile: the full tile into a local one (the padding is zeros), then the valid part.
      alignas(64) float tmp[kMr * kNr];
      micro<Pairs>(a, b, steps, tmp, kNr, false);
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t s = 0; s < nr; ++s) ci[r * ldc + s] = (accumulate ? ci[r * ldc + s] : 0.0f) + tmp[r * kNr + s];
    }
  }
}

// Pair panels of bf16 operands: dst[(g * stride + p) * R + r] = element (g * R + r, 2p) | element (.., 2p + 1) << 16
// (zero past depth or past rows), for p < stride; steps = ceil(depth / 2) <= stride (the AMX path pads the steps
// to whole tiles); element (row, d) at base + (row * rs + d * ds) * 2 bytes.
template <int R>
void pack_pair_panels(const uint8_t* base, int64_t rs, int64_t ds, int64_t rows, int64_t depth, float* out,
                      int64_t stride) {
  const int64_t steps = (depth + 1) / 2;
  uint32_t* dst = reinterpret_cast<uint32_t*>(out);
  const auto bits = [&](int64_t row, int64_t d) -> uint32_t {
    uint16_t h;
    std::memcpy(&h, base + (row * rs + d * ds) * 2, 2);
    return h;
  };
  for (int64_t g = 0; g * R < rows; ++g, dst += stride * R) {
    const int64_t count = rows - g * R < R ? rows - g * R : R;
    int64_t p = 0;
#if defined(__AVX2__)
    // Depth-contiguous rows of even stride: eight pairs of a row are eight consecutive uint32s, so the f32
    // 8x8 transpose moves them.
    if (ds == 1 && count == R && rs % 2 == 0) {
      const uint8_t* src = base + g * R * rs * 2;
      for (; 2 * p + 16 <= depth; p += 8) {
        int r = 0;
        for (; r + 8 <= R; r += 8)
          transpose_8x8<RowType::f32>(src + r * rs * 2, rs / 2, p, reinterpret_cast<float*>(dst + p * R + r), R);
        for (; r + 4 <= R; r += 4)
          transpose_4x8<RowType::f32>(src + r * rs * 2, rs / 2, p, reinterpret_cast<float*>(dst + p * R + r), R);
        for (; r < R; ++r)
          for (int j = 0; j < 8; ++j) dst[(p + j) * R + r] = bits(g * R + r, 2 * (p + j)) | bits(g * R + r, 2 * (p + j) + 1) << 16;
      }
    }
#endif
    // Row-contiguous (a matmul's b [K, N]): each pair interleaves two contiguous runs of bf16.
    if (rs == 1)
      for (; p < steps; ++p) {
        uint32_t* row = dst + p * R;
        const uint16_t* lo = reinterpret_cast<const uint16_t*>(base) + g * R + 2 * p * ds;
        const uint16_t* hi = lo + ds;
        int64_t r = 0;
        if (2 * p + 1 < depth)
          for (; r < count; ++r) row[r] = lo[r] | static_cast<uint32_t>(hi[r]) << 16;
        else
          for (; r < count; ++r) row[r] = lo[r];
        for (; r < R; ++r) row[r] = 0;
      }
    for (; p < steps; ++p) {
      uint32_t* row = dst + p * R;
      int64_t r = 0;
      for (; r < count; ++r)
        row[r] = bits(g * R + r, 2 * p) | (2 * p + 1 < depth ? bits(g * R + r, 2 * p + 1) << 16 : 0u);
      for (; r < R; ++r) row[r] = 0;
    }
    std::memset(dst + steps * R, 0, static_cast<size_t>((stride - steps) * R) * 4);
  }
}

inline float bias_at(const GemmOut& out, int64_t i) {
  const int64_t at = i * out.bias_stride;
  return out.bias_type == RowType::f32    ? load<RowType::f32>(out.bias, at)
         : out.bias_type == RowType::bf16 ? load<RowType::bf16>(out.bias, at)
                                          : load<RowType::f16>(out.bias, at);
}

// One bias per row (conv's output channels): added to the row as it is stored.
template <RowType T>
void store_rows_row_bias(const float* c, int64_t ldc, int64_t mc, int64_t nc, const GemmOut& out, int64_t m0,
                         int64_t n0) {
  for (int64_t i = 0; i < mc; ++i) {
    const float b = bias_at(out, m0 + i);
    const float* ci = c + i * ldc;
    uint8_t* row = out.data + ((m0 + i) * out.rs + n0 * out.cs) * type_size(T);
    if (out.cs == 1)
      for (int64_t j = 0; j < nc; ++j) store<T>(row, j, ci[j] + b);
    else
      for (int64_t j = 0; j < nc; ++j) store<T>(row, j * out.cs, ci[j] + b);
  }
}

template <RowType T>
void store_rows(const float* c, int64_t ldc, int64_t mc, int64_t nc, const GemmOut& out, int64_t m0, int64_t n0) {
  if (out.bias != nullptr && out.bias_by_row) return store_rows_row_bias<T>(c, ldc, mc, nc, out, m0, n0);
  float bias[1024];
  for (int64_t j0 = 0; j0 < nc; j0 += 1024) {
    const int64_t len = nc - j0 < 1024 ? nc - j0 : 1024;
    for (int64_t j = 0; j < len; ++j) bias[j] = out.bias == nullptr ? 0.0f : bias_at(out, n0 + j0 + j);
    for (int64_t i = 0; i < mc; ++i) {
      const float* ci = c + i * ldc + j0;
      uint8_t* row = out.data + ((m0 + i) * out.rs + (n0 + j0) * out.cs) * type_size(T);
      if (out.cs == 1)
        for (int64_t j = 0; j < len; ++j) store<T>(row, j, ci[j] + bias[j]);
      else
        for (int64_t j = 0; j < len; ++j) store<T>(row, j * out.cs, ci[j] + bias[j]);
    }
  }
}

}  // namespace

int gemm_mr() { return kMr; }
int gemm_nr() { return kNr; }

void gemm_pack_a(const GemmOperand& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, float* dst) {
  pack<kMr>(a, m0, mc, a.rs, k0, kc, a.cs, dst, panel_scale(a, false, m0, k0));
}

void gemm_pack_b(const GemmOperand& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
  pack<kNr>(b, n0, nc, b.cs, k0, kc, b.rs, dst, panel_scale(b, true, n0, k0));
}

void gemm_block(const float* pa, const float* pb, int64_t mc, int64_t nc, int64_t kc, float* c, int64_t ldc,
                bool accumulate) {
  block<false>(pa, pb, mc, nc, kc, c, ldc, accumulate);
}

bool gemm_pairs_fast() {
#if defined(__AVX512BF16__)
  return true;
#else
  return false;
#endif
}

void gemm_pack_a_pairs(const GemmOperand& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, float* dst) {
  pack_pair_panels<kMr>(a.data + (m0 * a.rs + k0 * a.cs) * 2, a.rs, a.cs, mc, kc, dst, (kc + 1) / 2);
}

void gemm_pack_b_pairs(const GemmOperand& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
  pack_pair_panels<kNr>(b.data + (k0 * b.rs + n0 * b.cs) * 2, b.cs, b.rs, nc, kc, dst, (kc + 1) / 2);
}

// The AMX direct path's rows (gemm_amx.cpp): columns [0, nc) of b as pair panels of 32 at every level, depth k
// (a multiple of 32).
void gemm_pack_direct_rows(const GemmOperand& b, int64_t k, int64_t nc, float* dst) {
  pack_pair_panels<32>(b.data, b.cs, b.rs, nc, k, dst, k / 2);
}

// The AMX path's B (gemm_amx.cpp): the pair panels with their steps padded to whole tiles of 16 (zeros).
void gemm_pack_b_amx(const GemmOperand& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
  pack_pair_panels<kNr>(b.data + (k0 * b.rs + n0 * b.cs) * 2, b.cs, b.rs, nc, kc, dst, (kc + 31) / 32 * 16);
}

void gemm_block_pairs(const float* pa, const float* pb, int64_t mc, int64_t nc, int64_t kc, float* c, int64_t ldc,
                      bool accumulate) {
  block<true>(pa, pb, mc, nc, (kc + 1) / 2, c, ldc, accumulate);
}

void gemm_store(const float* c, int64_t ldc, int64_t mc, int64_t nc, const GemmOut& out, int64_t m0, int64_t n0) {
  switch (out.type) {
    case RowType::f32: return store_rows<RowType::f32>(c, ldc, mc, nc, out, m0, n0);
    case RowType::bf16: return store_rows<RowType::bf16>(c, ldc, mc, nc, out, m0, n0);
    default: return store_rows<RowType::f16>(c, ldc, mc, nc, out, m0, n0);
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
