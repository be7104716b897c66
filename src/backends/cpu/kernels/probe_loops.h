// The roofline's probe loops (probe_loops.cpp beside this file), compiled at every ISA level like the kernels
// they measure, so that a level's floor is read and written by that level's own instructions.
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

// One level's loops. Each returns a value the caller keeps, so that the loop is not optimized away.
struct ProbeLoops {
  float (*read)(const float* p, int64_t n);              // sums n floats, software prefetch ahead
  void (*write)(float* p, int64_t n, float v);           // streaming stores where the level has them
  void (*copy)(float* dst, const float* src, int64_t n);  // likewise
  bool streaming_stores;
  // `iters` rounds of independent multiply-add chains; flops_per_iter says how much each round does.
  float (*fma)(int64_t iters, int64_t* flops_per_iter);
  float (*bf16_dot)(int64_t iters, int64_t* flops_per_iter);   // vdpbf16ps; null below avx512bf16
  float (*amx_dot)(int64_t iters, int64_t* flops_per_iter);    // TDPBF16PS on tiles; null below amx
};

#define FOURFOLD_CPU_DECLARE_PROBE_LOOPS(isa) \
  namespace isa {                             \
  ProbeLoops probe_loops();                   \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_PROBE_LOOPS)
#undef FOURFOLD_CPU_DECLARE_PROBE_LOOPS

}  // namespace fourfold::cpu
