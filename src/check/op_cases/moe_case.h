// What grouped_mm's and moe_experts' rows share: both take the moe suite's MoeCase and route its tokens by
// moe_group_sizes() (check/op_cases/moe_params.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fourfold/tensor.h"

namespace fourfold {

// grouped_mm's offs: the end row of each expert's group, as int32.
inline Tensor moe_offsets(const std::vector<int64_t>& sizes) {
  std::vector<double> ends(sizes.size());
  int64_t total = 0;
  for (size_t e = 0; e < sizes.size(); ++e) ends[e] = static_cast<double>(total += sizes[e]);
  return Tensor::from_vector(ends, {static_cast<int64_t>(sizes.size())}, DType::i32);
}

inline int64_t moe_total_rows(const std::vector<int64_t>& sizes) {
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  return total;
}

// Experts with at least one row: an idle expert's weights need not be read.
inline double moe_active_experts(const std::vector<int64_t>& sizes) {
  return static_cast<double>(std::count_if(sizes.begin(), sizes.end(), [](int64_t v) { return v > 0; }));
}

}  // namespace fourfold
