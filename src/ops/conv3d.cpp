// conv3d: checks and routing (the shared checks live in ops/conv_common).
#include "fourfold/ops.h"
#include "ops/conv_common.h"

namespace fourfold {

Tensor conv3d(const Tensor& x, const Tensor& weight, const OptTensor& bias, std::vector<int64_t> stride,
              std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups) {
  return conv::forward("conv3d", OpId::conv3d, &KernelTable::conv3d, 3, "[N, C, T, H, W]", x, weight, bias, stride,
                       padding, dilation, groups);
}

}  // namespace fourfold
