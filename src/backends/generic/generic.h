// The generic tier's kernels and the cases each covers (anything else falls through to the reference tier).
#pragma once

#include "ops/op_args.h"

namespace fourfold::generic {

void softmax(const SoftmaxArgs& args);
void log_softmax(const SoftmaxArgs& args);
bool softmax_covers(const SoftmaxArgs& args);

void constant_pad_nd(const PadArgs& args);
bool constant_pad_nd_covers(const PadArgs& args);

void linear(const LinearArgs& args);
bool linear_covers(const LinearArgs& args);
// The matrix products' last passes: out = product [M, N] f32 (+ bias [N] per column pass), converted once.
void finish_product(const Tensor& product, const Tensor* bias, Tensor& out);

void scaled_mm(const ScaledMmArgs& args);
bool scaled_mm_covers(const ScaledMmArgs& args);

void rms_norm(const RmsNormArgs& args);
bool rms_norm_covers(const RmsNormArgs& args);

void silu(const UnaryArgs& args);
bool silu_covers(const UnaryArgs& args);
void gelu(const GeluArgs& args);
bool gelu_covers(const GeluArgs& args);

void add(const BinaryArgs& args);
void mul(const BinaryArgs& args);
bool binary_covers(const BinaryArgs& args);

}  // namespace fourfold::generic
