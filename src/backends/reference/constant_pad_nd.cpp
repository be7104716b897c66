// Reference constant_pad_nd and its backward: each output element is either a copy of one input element or
// the fill value, decided from its own index alone.
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {
namespace {

void pad(const PadArgs& a) {
  const int rank = a.x.dim();
  // Offset of the input inside the output per dim: the "before" pad (negative when it crops).
  std::vector<int64_t> before(rank, 0);
  const int padded_dims = static_cast<int>(a.pads.size() / 2);
  for (int i = 0; i < padded_dims; ++i) before[rank - 1 - i] = a.pads[2 * i];

  // Elements are moved as bytes, not through double: int64 beyond 2^53, NaN payloads and the imaginary part
  // of complex64 must survive a pad bit for bit. The fill value is encoded once, rounding once.
  const size_t es = dtype_size(a.x.dtype());
  uint8_t fill[16];
  store_from_double(a.out.dtype(), fill, a.value);

  Index src(rank);
  for_each_index(a.out.shape(), [&](const int64_t* dst) {
    bool inside = true;
    for (int d = 0; d < rank; ++d) {
      src[d] = dst[d] - before[d];
      inside = inside && src[d] >= 0 && src[d] < a.x.shape()[d];
    }
    void* out = a.out.element_ptr({dst, static_cast<size_t>(rank)});
    std::memcpy(out, inside ? a.x.element_ptr(src) : static_cast<const void*>(fill), es);
  });
}

}  // namespace

void constant_pad_nd(const PadArgs& args) { pad(args); }

// The ops layer hands the backward PadArgs whose pads are already negated (and value 0): the gradient of a pad
// is the crop that undoes it, so this is the forward kernel on grad_out.
void constant_pad_nd_backward(const PadArgs& args) { pad(args); }

}  // namespace fourfold::ref
