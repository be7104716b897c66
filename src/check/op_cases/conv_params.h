// The conv suite's row, conv2d's or conv3d's by x's rank: read in conv2d.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fourfold/tensor.h"

namespace fourfold {

// conv2d (x [N, C, H, W]) or conv3d (x [N, C, T, H, W]): weight [O, C / groups, *kernel], bias [O] when `bias`;
// stride, padding and dilation one value per spatial dim.
struct ConvCase {
  Shape x, weight;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  bool bias = true;
  Shape out_shape() const;   // [N, O, *out_spatial]
};
void to_json(nlohmann::ordered_json& j, const ConvCase& c);

}  // namespace fourfold
