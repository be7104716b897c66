// What the generic tier's op files share: the compositions more than one op is built from. Each op's own
// kernel is file-local and registers itself (generic_registration.h).
#pragma once

#include <cstdint>

#include "backends/op_args.h"

namespace fourfold::generic {

// The matrix products' last passes (linear.cpp): out = product [M, N] f32 (+ bias [N] per column pass),
// converted once.
void finish_product(const Tensor& product, const Tensor* bias, Tensor& out);

// x [rows, d] (contiguous f32) / sqrt(mean of the row's squares + eps) * weight[d] (or none), each a pass into
// its own temporary; the result a new f32 temporary (rms_norm.cpp).
Tensor rms_rows_f32(const Tensor& x, const Tensor* weight, double eps);
// silu of x (contiguous f32) as a new f32 temporary: negate, exp, add one, reciprocal, multiply by x (silu.cpp).
Tensor silu_f32(const Tensor& x);

// conv2d / conv3d (conv_nd.cpp) with the im2col temporary of each band of output rows bounded by columns_bytes
// (at least one row).
void conv_in_bands(const ConvArgs& args, int64_t columns_bytes);

}  // namespace fourfold::generic
