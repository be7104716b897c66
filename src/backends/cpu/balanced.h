// One parallel region over work items of uneven cost: the items, in order, cut into one contiguous run per
// thread of about equal total cost (grouped_mm's tiles of uneven groups, moe_experts' experts).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace fourfold::cpu {

// Calls fn(i) once for every item i in [0, cost.size()); returns when all are done.
void run_balanced(const std::vector<double>& cost, const std::function<void(int64_t)>& fn);

}  // namespace fourfold::cpu
