// PLACEHOLDER: reference kernels not written yet; each is replaced by backends/reference/<op>.cpp.
#include "backends/reference/reference.h"
#include "fourfold/errors.h"

namespace fourfold::ref {

void constant_pad_nd(const PadArgs&) { throw UnsupportedError("constant_pad_nd: reference kernel not implemented yet"); }
void constant_pad_nd_backward(const PadArgs&) { throw UnsupportedError("constant_pad_nd_backward: reference kernel not implemented yet"); }
void conv2d(const ConvArgs&) { throw UnsupportedError("conv2d: reference kernel not implemented yet"); }
void conv3d(const ConvArgs&) { throw UnsupportedError("conv3d: reference kernel not implemented yet"); }
void upsample_nearest(const UpsampleArgs&) { throw UnsupportedError("upsample_nearest: reference kernel not implemented yet"); }

}  // namespace fourfold::ref
