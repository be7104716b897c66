// Reference conv3d: the float64 window sum of conv_nd.h over three spatial dims.
#include "backends/reference/conv_nd.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void conv3d(const ConvArgs& args) { conv_nd(args); }

}  // namespace fourfold::ref
