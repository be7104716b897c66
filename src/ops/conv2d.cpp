// conv2d: checks and routing (the shared checks live in ops/conv_common).
#include "fourfold/ops.h"
#include "ops/conv_common.h"

namespace fourfold {

Tensor conv2d(const Tensor& x, const Tensor& weight, const OptTensor& bias, std::vector<int64_t> stride,
              std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups) {
  return conv::forward("conv2d", OpId::conv2d, &KernelTable::conv2d, 2, "[N, C, H, W]", x, weight, bias, stride,
                       padding, dilation, groups);
}

}  // namespace fourfold
