// The moe suite's row, which grouped_mm and moe_experts rows share: read in grouped_mm.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace fourfold {

enum class MoeRouting { even, skewed, empty };
std::string_view moe_routing_name(MoeRouting routing);

// grouped_mm 2-D x 3-D: a [tokens * top_k, k], b [experts, k, n] (the transposed view of [experts, n, k]
// weights), offs from moe_group_sizes().
struct MoeCase {
  int64_t tokens = 1, experts = 1, top_k = 1, n = 1, k = 1;
  std::string projection;
  MoeRouting routing = MoeRouting::even;
};
// With the group sizes, so that a reader of the rows need not route the tokens again.
void to_json(nlohmann::ordered_json& j, const MoeCase& c);

// Rows per expert (group sizes, in expert order) for `tokens` tokens routed to `top_k` distinct experts each:
//   even:   the tokens * top_k assignments dealt round-robin over all experts;
//   skewed: proportional to 1 / (e + 1) (Zipf, s = 1) by the D'Hondt rule, at most `tokens` per expert;
//   empty:  every token picks the same top_k experts, e = j * experts / top_k; the others get none.
// Sums to tokens * top_k; every size <= tokens.
std::vector<int64_t> moe_group_sizes(int64_t tokens, int64_t experts, int64_t top_k, MoeRouting routing);

}  // namespace fourfold
