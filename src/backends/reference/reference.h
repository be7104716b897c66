// The float64 reference tier: plain loops over any strides, float64 accumulation, no threads, no SIMD.
// It is the oracle every other tier and the correctness record are measured against.
#pragma once

#include "backends/op_list.h"

namespace fourfold::ref {

#define FOURFOLD_REF_DECLARE(name, Args) void name(const Args& args);
FOURFOLD_OP_LIST(FOURFOLD_REF_DECLARE)
#undef FOURFOLD_REF_DECLARE

}  // namespace fourfold::ref
