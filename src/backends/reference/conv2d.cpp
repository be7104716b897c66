// Reference conv2d: the float64 window sum of conv_nd.h over two spatial dims.
#include "backends/reference/conv_nd.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void conv2d(const ConvArgs& args) { conv_nd(args); }

}  // namespace fourfold::ref
