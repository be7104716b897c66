// channel_rms_norm's per-ISA loop (channel_rms_norm.cpp beside this file).
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

// A run of positions of a channel-first tensor: x and out at channel 0 of the run's first position, channel c
// `stride` elements further on; weight [C] or null.
struct ChannelNormRun {
  const void* x;
  const void* weight;
  void* out;
  int64_t stride;
};

#define FOURFOLD_CPU_DECLARE_CHANNEL_RMS_NORM(isa)                                                        \
  namespace isa {                                                                                         \
  /* channel_rms_norm over `positions` positions of `channels` channels each (silu: fused, of the value   \
     rounded to the type). */                                                                             \
  void channel_rms_norm_run(const ChannelNormRun& run, RowType type, int64_t channels, int64_t positions,  \
                            double eps, bool silu);                                                       \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_CHANNEL_RMS_NORM)
#undef FOURFOLD_CPU_DECLARE_CHANNEL_RMS_NORM

}  // namespace fourfold::cpu
