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

// Decode GEMV (kernels/gemv.cpp), shared by linear / scaled_linear with M <= 8 and scaled_mm with small M.
using GemvRowsFn = void (*)(const GemvPlan&, int64_t, int64_t);
// The plan's N rows split over the threads in one parallel region.
void run_gemv(const GemvPlan& plan, GemvRowsFn rows);
// Fills the plan's epilogue fields: bias (or null) and out [M, N], f32 / bf16 / f16, any strides.
void plan_epilogue(GemvPlan& plan, const Tensor* bias, Tensor& out);
// RowType of an f32 / bf16 / f16 dtype.
RowType row_type(DType dtype);

// x [M <= 8, K] f32 / bf16 / f16 (any strides) against a k-contiguous weight of x's dtype, bf16 / f16 under
// f32 x, or fp8 with an f32 weight_scale.
bool linear_decode_covers(const LinearArgs& args);
void linear_decode(const LinearArgs& args, GemvRowsFn rows);

// a [M <= 8, K] fp8 (any strides) against b [K, N] fp8 with K contiguous (b = W^T), every recipe.
bool scaled_mm_decode_covers(const ScaledMmArgs& args);
void scaled_mm_decode(const ScaledMmArgs& args, GemvRowsFn rows);

}  // namespace fourfold::cpu
