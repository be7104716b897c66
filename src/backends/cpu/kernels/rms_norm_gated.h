// rms_norm_gated's per-ISA row (rms_norm_gated.cpp beside this file).
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

// One row of rms_norm_gated; pointers to element 0 of the row, elements contiguous; weight may be null.
struct RmsNormGatedRow {
  const void* x;
  const void* gate;
  const void* weight;     // the row's type, or f32 when weight_f32
  void* out;
  bool weight_f32;
};

#define FOURFOLD_CPU_DECLARE_RMS_NORM_GATED(isa)                                                \
  namespace isa {                                                                               \
  void rms_norm_gated_row(const RmsNormGatedRow& row, RowType type, int64_t d, double eps);     \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_RMS_NORM_GATED)
#undef FOURFOLD_CPU_DECLARE_RMS_NORM_GATED

using RmsNormGatedFn = void (*)(const RmsNormGatedRow&, RowType, int64_t, double);

}  // namespace fourfold::cpu
