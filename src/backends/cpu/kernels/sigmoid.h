// sigmoid's per-ISA pass (sigmoid.cpp beside this file).
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

#define FOURFOLD_CPU_DECLARE_SIGMOID(isa)                          \
  namespace isa {                                                  \
  /* out[i] = 1 / (1 + exp(-x[i])) for i in [0, n). */             \
  void sigmoid(const void* x, void* out, RowType type, int64_t n); \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_SIGMOID)
#undef FOURFOLD_CPU_DECLARE_SIGMOID

using SigmoidFn = void (*)(const void*, void*, RowType, int64_t);

}  // namespace fourfold::cpu
