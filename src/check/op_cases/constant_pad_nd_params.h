// The pad suite's row: read in constant_pad_nd.cpp.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fourfold/tensor.h"

namespace fourfold {

// How a pad input is laid out in memory (the logical shape is always the case's shape).
enum class PadLayout {
  contiguous,
  channels_last,   // stored [N, *spatial, C], viewed as [N, C, *spatial] (2-D: stored transposed)
  sliced,          // innermost dim is x[..., 1:W+1] of a buffer W + 2 wide
};
std::string_view pad_layout_name(PadLayout layout);

struct PadCase {
  Shape shape;
  std::vector<int64_t> pads;
  PadLayout layout = PadLayout::contiguous;
  double value = 0.0;
};
void to_json(nlohmann::ordered_json& j, const PadCase& c);

}  // namespace fourfold
