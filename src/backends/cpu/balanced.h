// One parallel region over work items of uneven cost (grouped_mm's tiles of uneven groups, moe_experts'
// experts), scheduled by guided self-scheduling: the items in order of decreasing cost, each thread claiming
// the next contiguous run worth 1 / (2 x threads) of the cost still unclaimed. Costs are estimates, and a GEMV
// tile's weight reads and a GEMM tile's packing weigh differently on each machine: claiming on demand keeps
// every thread busy to the end anyway. The first runs are long (a decode GEMV's tiles stream one weight
// sequentially, as the static split did) and the last are single items, smallest last.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace fourfold::cpu {

// Calls fn(i) once for every item i in [0, cost.size()); returns when all are done. Items of equal cost run
// in index order (neighbouring tiles of one group share operands in cache).
void run_balanced(const std::vector<double>& cost, const std::function<void(int64_t)>& fn);

}  // namespace fourfold::cpu
