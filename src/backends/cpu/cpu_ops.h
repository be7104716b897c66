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

struct AttentionPieces {
  void (*tile)(const AttnTile&);
};
// f32 / bf16 / f16; K and V rows with contiguous elements (any other strides).
bool attention_covers(const AttentionArgs& args);
void scaled_dot_product_attention(const AttentionArgs& args, const AttentionPieces& pieces);

}  // namespace fourfold::cpu
