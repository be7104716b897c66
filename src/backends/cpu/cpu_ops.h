// The dedicated CPU tier's ops: planning, Tensor access and threading, written once (baseline ISA), each
// calling the per-ISA pieces (kernels/kernels.h) it is handed.
#pragma once

#include "backends/cpu/gemm.h"
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

// GEMM-based ops (gemm.h's driver). linear: the packed GEMM for prefill, more than kLinearDecodeMaxRows rows
// (fewer rows are the decode GEMV's, linear_decode.cpp); not fp8 weights.
inline constexpr int64_t kLinearDecodeMaxRows = 8;
bool linear_prefill_covers(const LinearArgs& args);
void linear_prefill(const LinearArgs& args, const GemmPieces& pieces);
// matmul / bmm: real f32/bf16/f16 and complex64, any strides and broadcast batches.
bool matmul_covers(const MatmulArgs& args);
void matmul(const MatmulArgs& args, const GemmPieces& pieces);
// linear_backward: grad_x = g W, grad_weight = g^T x, grad_bias = column sums of g, in one parallel region.
bool linear_backward_covers(const LinearBackwardArgs& args);
void linear_backward(const LinearBackwardArgs& args, const GemmPieces& pieces);
struct AttentionPieces {
  void (*tile)(const AttnTile&);
};
// f32 / bf16 / f16; K and V rows with contiguous elements (any other strides).
bool attention_covers(const AttentionArgs& args);
void scaled_dot_product_attention(const AttentionArgs& args, const AttentionPieces& pieces);

}  // namespace fourfold::cpu
