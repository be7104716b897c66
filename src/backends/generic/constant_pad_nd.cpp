// Generic constant_pad_nd: fill all of out with the value, then a strided copy of the (cropped) input into
// out's interior view. Bytes are moved as they are, so every dtype it covers is bit-exact.
#include <algorithm>

#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

// Any storage dtype; f64 exists only for the oracle.
bool constant_pad_nd_covers(const PadArgs& a) { return a.x.dtype() != DType::f64; }

void constant_pad_nd(const PadArgs& a) {
  fill(a.out, a.value);
  Tensor src = a.x, dst = a.out;
  const int rank = a.x.dim();
  for (size_t i = 0; i < a.pads.size() / 2; ++i) {
    const int d = rank - 1 - static_cast<int>(i);
    const int64_t before = a.pads[2 * i], after = a.pads[2 * i + 1];
    // Negative pads crop the input; positive ones move its place inside out.
    const int64_t start = std::max<int64_t>(0, -before);
    const int64_t end = a.x.size(d) - std::max<int64_t>(0, -after);
    const int64_t length = end - start;
    if (length <= 0) return;   // nothing of the input survives: out is all fill
    src = src.narrow(d, start, length);
    dst = dst.narrow(d, std::max<int64_t>(0, before), length);
  }
  copy(src, dst);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(constant_pad_nd) {
  t.constant_pad_nd = entry(&constant_pad_nd, &constant_pad_nd_covers);
  // The backward is the forward with the pads negated (a crop): the same fill-then-copy composition.
  t.constant_pad_nd_backward = entry(&constant_pad_nd, &constant_pad_nd_covers);
}

}  // namespace fourfold::generic
