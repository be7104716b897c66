// The attention suite's row: read in scaled_dot_product_attention.cpp.
#pragma once

#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "fourfold/ops.h"

namespace fourfold {

// scaled_dot_product_attention: q [batch, q_heads, q_len, head_dim], k and v [batch, kv_heads, kv_len,
// head_dim], enable_gqa when the head counts differ.
struct AttentionCase {
  int64_t batch = 1, q_heads = 1, kv_heads = 1, head_dim = 1, q_len = 1, kv_len = 1;
  CausalMode causal = CausalMode::none;
  double attended_pairs() const;   // (query, key) pairs of one head that the mask keeps
};
void to_json(nlohmann::ordered_json& j, const AttentionCase& c);

}  // namespace fourfold
