// The softmax suite's row: read in softmax.cpp.
#pragma once

#include <cstdint>

#include <nlohmann/json_fwd.hpp>

namespace fourfold {

// softmax over the last of [rows, cols] (dim as in the file, normally -1).
struct SoftmaxCase {
  int64_t rows = 1, cols = 1;
  int dim = -1;
};
void to_json(nlohmann::ordered_json& j, const SoftmaxCase& c);

}  // namespace fourfold
