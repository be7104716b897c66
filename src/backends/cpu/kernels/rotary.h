// rotary_embedding's per-ISA row (rotary.cpp beside this file).
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

// One row of rotary_embedding: x and out [d] (out may be x), cos and sin [half].
struct RotaryRow {
  const void* x;
  const void* cos;
  const void* sin;
  void* out;
};

#define FOURFOLD_CPU_DECLARE_ROTARY(isa)                                                            \
  namespace isa {                                                                                   \
  /* Rotates the pairs of R = 2 * half elements, copies [R, d) when out is not x. */                 \
  void rotary_row(const RotaryRow& row, RowType type, int64_t half, int64_t d, bool interleaved);   \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_ROTARY)
#undef FOURFOLD_CPU_DECLARE_ROTARY

}  // namespace fourfold::cpu
