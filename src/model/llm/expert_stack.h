// The experts of one projection of one layer as a single [E, out, in] tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "fourfold/tensor.h"

namespace fourfold::model {

// A view without copying when the parts are contiguous, of one dtype and shape, and equally spaced in one
// storage (what a checkpoint writer that puts a projection's experts next to each other produces, and what a
// memory-mapped file then gives); otherwise one copy into a new [E, out, in] tensor, whose size is added to
// `copied_bytes`.
Tensor stack_experts(const std::vector<Tensor>& parts, uint64_t& copied_bytes);

}  // namespace fourfold::model
