// rms_norm's per-ISA row (rms_norm.cpp beside this file).
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

// One row of rms_norm: h = x (+ residual), sum_out = h rounded to the row's type when given,
// out = h * (mean(h^2) + eps)^(-1/2) * weight. Pointers to element 0 of the row, elements contiguous;
// residual, weight and sum_out may be null.
struct RmsNormRow {
  const void* x;
  const void* residual;
  const void* weight;     // the row's type, or f32 when weight_f32
  void* out;
  void* sum_out;
  bool weight_f32 = false;
};

#define FOURFOLD_CPU_DECLARE_RMS_NORM(isa)                                     \
  namespace isa {                                                              \
  void rms_norm_row(const RmsNormRow& row, RowType type, int64_t d, double eps); \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_RMS_NORM)
#undef FOURFOLD_CPU_DECLARE_RMS_NORM

}  // namespace fourfold::cpu
