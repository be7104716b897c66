// Argument checks and output shapes shared by conv2d, conv3d and causal_conv3d.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/kernel_table.h"
#include "fourfold/ops.h"

namespace fourfold::conv {

// A per-spatial-dim parameter (stride, padding, dilation): one value for every dim, as PyTorch's int form, or
// one per spatial dim; every value >= min_value. Returns one value per spatial dim.
std::vector<int64_t> expand_param(const char* op, const char* arg, const std::vector<int64_t>& values, int spatial,
                                  int64_t min_value);

// dtypes, ranks, groups, the channel count against weight and groups, kernel sizes >= 1, bias [O].
// `layout` names x's dims for messages, e.g. "[N, C, H, W]".
void check_operands(const char* op, const Tensor& x, const Tensor& weight, const OptTensor& bias, int spatial,
                    int64_t groups, const char* layout);

// The output size along x's dim `dim` (a spatial dim) of an input whose padded size is `padded`; a ShapeError
// naming 'x' and the dim when the dilated kernel does not fit (output size <= 0).
int64_t output_size(const char* op, int dim, int64_t padded, int64_t kernel, int64_t stride, int64_t dilation);

// conv2d / conv3d: all checks, the output allocation and the dispatch.
Tensor forward(const char* op, OpId id, Kernel<ConvArgs> KernelTable::*entry, int spatial, const char* layout,
               const Tensor& x, const Tensor& weight, const OptTensor& bias, const std::vector<int64_t>& stride,
               const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups);

}  // namespace fourfold::conv
