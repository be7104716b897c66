// gated_delta_rule's per-ISA loops (gated_delta_rule.cpp beside this file): one (batch, value head) problem in
// f32, with q and k already L2-normalized (q scaled) and the gates computed by the planner.
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

struct DeltaHeadPlan {
  const float* q;          // [T, Dk], rows qk_row floats apart
  const float* k;          // [T, Dk], as q
  int64_t qk_row;
  const void* v;           // [T, Dv] of v_type, rows v_row elements apart, elements contiguous
  int64_t v_row;
  RowType v_type;
  const float* g;          // [T] log decay, gate_step floats apart
  const float* beta;       // [T], as g
  int64_t gate_step;
  float* state;            // [Dk, Dv] contiguous: read, then overwritten with the state after the last token
  void* out;               // [T, Dv] of out_type, rows out_row elements apart
  int64_t out_row;
  RowType out_type;
  int64_t tokens, dk, dv;  // dv a multiple of 16
};

// Floats of scratch delta_rule_chunks needs.
inline int64_t delta_rule_chunk_scratch(int64_t chunk, int64_t dk, int64_t dv) {
  return 4 * chunk * chunk + chunk * (3 * dv + 3 * dk) + dk * chunk + 2 * chunk;
}

#define FOURFOLD_CPU_DECLARE_GATED_DELTA_RULE(isa)                                                         \
  namespace isa {                                                                                          \
  /* Token by token, columns [c0, c1) of the state and the output (each column of S evolves on its own). */ \
  void delta_rule_columns(const DeltaHeadPlan& plan, int64_t c0, int64_t c1);                              \
  /* Chunks of `chunk` tokens as small matrix products, transformers' chunked form, all columns. */         \
  void delta_rule_chunks(const DeltaHeadPlan& plan, int64_t chunk, float* scratch);                        \
  /* One q or k row of d elements as f32: L2-normalized (x / sqrt(sum x^2 + 1e-6)) when asked, times scale. */ \
  void delta_rule_qk_row(const void* x, RowType type, int64_t d, bool l2norm, float scale, float* out);      \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_GATED_DELTA_RULE)
#undef FOURFOLD_CPU_DECLARE_GATED_DELTA_RULE

using DeltaColumnsFn = void (*)(const DeltaHeadPlan&, int64_t, int64_t);
using DeltaChunksFn = void (*)(const DeltaHeadPlan&, int64_t, float*);
using DeltaQkRowFn = void (*)(const void*, RowType, int64_t, bool, float, float*);
struct DeltaRuleLoops {
  DeltaColumnsFn columns;
  DeltaChunksFn chunks;
  DeltaQkRowFn qk_row;
};

}  // namespace fourfold::cpu
