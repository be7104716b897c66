// The row_ops suites' row (decoder-fused, backward, complex-matmul, decode-ops, diffusion-ops): read in
// check/suites.cpp, the one format many case files share.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fourfold/tensor.h"

namespace fourfold {

// One case per line, `op` naming its case file (src/check/op_cases/<op>.cpp), which says the fields it needs and
// what they mean, the op it times (the op-list name of the file, but add_rms_norm and complex_matmul time
// rms_norm and matmul) and its call. The fields: rows, cols, heads, kv_heads (default: heads), m, n, k, groups
// (default 1) and the shapes x and size.
struct OpCases;
struct RowOpCase {
  const OpCases* cases = nullptr;   // the case file's entry (check/op_cases/op_case.h)
  int64_t rows = 1, cols = 1, heads = 1;
  int64_t m = 1, n = 1, k = 1;
  int64_t kv_heads = 1;
  Shape x = {};
  std::vector<int64_t> size = {};
  int64_t groups = 1;
};
void to_json(nlohmann::ordered_json& j, const RowOpCase& c);

}  // namespace fourfold
