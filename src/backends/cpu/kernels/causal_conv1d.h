// causal_conv1d's per-ISA loop (causal_conv1d.cpp beside this file).
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

// The widest kernel the loop keeps in registers (taps beyond it take the generic tier).
inline constexpr int64_t kConvMaxTaps = 8;

// One batch row of causal_conv1d, channel-last: x, out [T] rows of C elements (row strides in elements), the
// state [K-1] rows of C elements, weight [K] rows of C f32 (tap-major) and bias [C] f32 or null. Each element
// index is a channel; columns (channels) are independent.
struct CausalConvPlan {
  const void* x;
  int64_t x_row;
  void* out;
  int64_t out_row;
  void* state;            // null: zeros before x, nothing written back
  int64_t state_row;
  const float* weight;    // [K, C]
  const float* bias;      // [C] or null
  RowType type;           // x, out and state
  int64_t channels, tokens, taps;
  bool silu;
};

#define FOURFOLD_CPU_DECLARE_CAUSAL_CONV1D(isa)                                           \
  namespace isa {                                                                         \
  /* Channels [c0, c1) of every token (c0 a multiple of the lane count, or the start). */ \
  void causal_conv1d_channels(const CausalConvPlan& plan, int64_t c0, int64_t c1);        \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_CAUSAL_CONV1D)
#undef FOURFOLD_CPU_DECLARE_CAUSAL_CONV1D

using CausalConvFn = void (*)(const CausalConvPlan&, int64_t, int64_t);

}  // namespace fourfold::cpu
