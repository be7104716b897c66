// Reference upsample_nearest (mode='nearest'): each output element copies the input element at
// src = floor(dst * in / out) along every spatial dim.
#include <cstring>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void upsample_nearest(const UpsampleArgs& a) {
  const int rank = a.x.dim();
  const size_t es = dtype_size(a.x.dtype());
  Index src(rank);
  for_each_index(a.out.shape(), [&](const int64_t* dst) {
    src[0] = dst[0];
    src[1] = dst[1];
    // Exact integer arithmetic: PyTorch computes the scale in float32, which can differ by one for some
    // large non-integer ratios; ops.h defines the exact floor.
    for (int d = 2; d < rank; ++d) src[d] = dst[d] * a.x.shape()[d] / a.out.shape()[d];
    // Copied as bytes so that every dtype (int64, NaN payloads, complex) passes through unchanged.
    std::memcpy(a.out.element_ptr({dst, static_cast<size_t>(rank)}), a.x.element_ptr(src), es);
  });
}

}  // namespace fourfold::ref
