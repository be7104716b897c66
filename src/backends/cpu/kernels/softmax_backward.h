// softmax / log_softmax backward's per-ISA passes (softmax_backward.cpp beside this file).
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

#define FOURFOLD_CPU_DECLARE_SOFTMAX_BACKWARD(isa)                                                        \
  namespace isa {                                                                                         \
  /* sum(g * y) (softmax) or sum(g) (log_softmax) over [0, n), in double. */                              \
  double softmax_backward_dot(const void* g, const void* y, RowType type, int64_t n, bool log);           \
  /* gi = y * (g - dot) (softmax) or g - exp(y) * dot (log_softmax). */                                   \
  void softmax_backward_write(const void* g, const void* y, void* gi, RowType type, int64_t n, double dot, \
                              bool log);                                                                  \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_SOFTMAX_BACKWARD)
#undef FOURFOLD_CPU_DECLARE_SOFTMAX_BACKWARD

}  // namespace fourfold::cpu
