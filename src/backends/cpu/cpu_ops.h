// The dedicated CPU tier's ops: planning, Tensor access and threading, written once (baseline ISA), each
// calling the per-ISA pieces (kernels/kernels.h) it is handed.
#pragma once

#include "backends/cpu/kernels/kernels.h"
#include "ops/op_args.h"

namespace fourfold::cpu {

using PadRowsFn = void (*)(const PadPlan&, int64_t, int64_t);
void constant_pad_nd(const PadArgs& args, PadRowsFn pad_rows);

struct SoftmaxPieces {
  RowStats (*stats)(const void*, RowType, int64_t);
  void (*write)(const void*, void*, RowType, int64_t, float, float, bool, bool);
};
// Contiguous rows along the last dim, f32 / bf16 / f16.
bool softmax_covers(const SoftmaxArgs& args);
void softmax(const SoftmaxArgs& args, bool log, const SoftmaxPieces& pieces);

// grouped_mm and moe_experts: f32 or bf16 with K-contiguous rows of A and B^T (a checkpoint's [out, in]
// weights, passed to grouped_mm as the transposed view; moe_experts' experts may also be fp8 e4m3fn with
// 128x128 block scales); other layouts fall back to the generic tier.
using DotTileFn = void (*)(const DotTile&);
bool grouped_mm_covers(const GroupedMmArgs& args);
void grouped_mm(const GroupedMmArgs& args, DotTileFn dot);
bool moe_experts_covers(const MoeExpertsArgs& args);
void moe_experts(const MoeExpertsArgs& args, DotTileFn dot);
// An f32 tile [rows, cols] (row stride ldt) stored to out (f32 or bf16; strides in elements), rounding once.
void store_tile(const float* tile, int64_t ldt, int64_t rows, int64_t cols, uint8_t* out, int64_t o_rs, int64_t o_cs,
                DType dtype);

}  // namespace fourfold::cpu
