#include "backends/cpu/balanced.h"

#include <algorithm>
#include <mutex>
#include <numeric>

#include "fourfold/parallel.h"

namespace fourfold::cpu {

void run_balanced(const std::vector<double>& cost, const std::function<void(int64_t)>& fn) {
  const int64_t items = static_cast<int64_t>(cost.size());
  if (items == 0) return;
  std::vector<int64_t> order(static_cast<size_t>(items));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return cost[static_cast<size_t>(x)] > cost[static_cast<size_t>(y)]; });
  const int64_t parts = std::min<int64_t>(num_threads(), items);
  double unclaimed = 0;
  for (double c : cost) unclaimed += std::max(c, 0.0);
  std::mutex mutex;
  int64_t next = 0;
  // [begin, end) of `order`, empty when every item is claimed. A few claims per thread and call: a mutex is fine.
  const auto claim = [&]() -> std::pair<int64_t, int64_t> {
    const std::lock_guard<std::mutex> lock(mutex);
    const int64_t begin = next;
    const double share = unclaimed / static_cast<double>(2 * parts);
    double taken = 0;
    while (next < items && (next == begin || taken < share)) taken += std::max(cost[static_cast<size_t>(order[next++])], 0.0);
    unclaimed -= taken;
    return {begin, next};
  };
  parallel_for(0, parts, 1, [&](int64_t, int64_t) {
    for (auto [begin, end] = claim(); begin < end; std::tie(begin, end) = claim())
      for (int64_t i = begin; i < end; ++i) fn(order[static_cast<size_t>(i)]);
  });
}

}  // namespace fourfold::cpu
