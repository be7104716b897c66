// silu_mul's per-ISA pass (silu_mul.cpp beside this file); moe_experts runs it on its gate and up rows too.
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

#define FOURFOLD_CPU_DECLARE_SILU_MUL(isa)                                          \
  namespace isa {                                                                   \
  /* out[i] = gate[i] / (1 + exp(-gate[i])) * up[i]. */                             \
  void silu_mul(const void* gate, const void* up, void* out, RowType type, int64_t n); \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_SILU_MUL)
#undef FOURFOLD_CPU_DECLARE_SILU_MUL

using SiluMulFn = void (*)(const void*, const void*, void*, RowType, int64_t);

}  // namespace fourfold::cpu
