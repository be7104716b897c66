// The decode GEMV's scaffolding, shared by its per-type row loops (gemv.cpp: f32, bf16, f16 and fp8 rows;
// gemv_fp4.cpp: FP4 rows): the activation loads, the lane sum, the epilogue and the row group (its rows, their
// prefetch targets, the fold of block sums and the store). Included only by kernel files, like vec.h: every
// definition here is per-ISA and internal.
#pragma once

#include <cstdint>
#include <cstring>

#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/kernels/vec.h"   // lanes, vector types
#include "fourfold/dtype.h"   // the out-of-line scalar conversions of the epilogue

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {

// FP4 rows (gemv_fp4.cpp), which gemv_rows hands its e2m1 plans to.
void gemv_fp4_rows(const GemvPlan& p, int64_t n_begin, int64_t n_end);

namespace {

constexpr int64_t kLineBytes = 64;   // a cache line: the unit of the main loop, its prefetch and NaN check

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

// What the row loops share: R weight rows from n0, their scales, the K blocks, the fold of a block's sums into
// the row totals and the epilogue.
template <int R>
struct RowGroup {
  const GemvPlan& p;
  const int64_t n0;
  const uint8_t* w[R];
  const uint8_t* ahead[R];     // the rows R later (this row again past the last)
  const float* scale_row[R];   // each row's scales, one per k block group
  // Blocks of kGemvKBlock, or the scale's 128 when that is finer (the 128x128 recipes).
  int64_t block;
  // The scale's k group of block k0 / block: the block itself (128), or 0 for a whole-K group (no division per
  // block: with 128-wide blocks it was a measurable part of the fold).
  bool scale_per_block;

  RowGroup(const GemvPlan& plan, int64_t first) : p(plan), n0(first) {
    for (int r = 0; r < R; ++r) {
      w[r] = p.w + (n0 + r) * p.w_row_bytes;
      ahead[r] = n0 + r + R < p.n ? w[r] + R * p.w_row_bytes : w[r];
      scale_row[r] = p.scale == nullptr ? nullptr : p.scale + ((n0 + r) / p.scale_n_group) * p.scale_n_stride;
    }
    block = p.scale != nullptr && p.scale_k_group < kGemvKBlock ? p.scale_k_group : kGemvKBlock;
    scale_per_block = p.scale != nullptr && p.scale_k_group == block;
  }

  // total += acc (times the scale of k block kb).
  template <int M>
  [[gnu::always_inline]] void fold(const vf (&acc)[R][M], vf (&total)[R][M], int64_t kb) const {
    for (int r = 0; r < R; ++r) {
      if (p.scale == nullptr) {
        for (int m = 0; m < M; ++m) total[r][m] += acc[r][m];
      } else {
        const vf sc = splat(scale_row[r][kb * p.scale_k_stride]);
        for (int m = 0; m < M; ++m) total[r][m] += acc[r][m] * sc;
      }
    }
  }

  // out = lanes of total summed, times `unscale` (a power of two, 2^exp2, in double so that any exp2 the pair
  // activations chose is representable: the product is exact in double and rounds once to f32, the bits of
  // ldexp), plus the bias; NaN for the rows marked nan. The caller takes the power once per call: an ldexp per
  // output was a libm call, with the live vector registers spilled around it, in every lone fp8 row.
  template <int M>
  void store(const vf (&total)[R][M], const bool (&nan)[R], double unscale) const {
    for (int r = 0; r < R; ++r) {
      const int64_t n = n0 + r;
      const float b = p.bias == nullptr ? 0.0f : epilogue_load(p.bias, p.bias_type, n * p.bias_stride);
      for (int m = 0; m < M; ++m) {
        float y = lane_sum(total[r][m]);
        if (unscale != 1.0) y = static_cast<float>(static_cast<double>(y) * unscale);
        y = nan[r] ? std::numeric_limits<float>::quiet_NaN() : y + b;
        epilogue_store(p.out, p.out_type, m * p.out_m_stride + n * p.out_n_stride, y);
      }
    }
  }
};

}  // namespace
}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
