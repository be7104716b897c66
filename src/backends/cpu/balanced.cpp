#include "backends/cpu/balanced.h"

#include <algorithm>

#include "fourfold/parallel.h"

namespace fourfold::cpu {

void run_balanced(const std::vector<double>& cost, const std::function<void(int64_t)>& fn) {
  const int64_t items = static_cast<int64_t>(cost.size());
  if (items == 0) return;
  const int64_t parts = std::min<int64_t>(num_threads(), items);
  double total = 0;
  for (double c : cost) total += c;
  // Item i goes to the part its cost midpoint falls in: contiguous runs, each within one item of parts' share.
  std::vector<int64_t> first(static_cast<size_t>(parts + 1), items);
  first[0] = 0;
  double before = 0;
  int64_t part = 0;
  for (int64_t i = 0; i < items; ++i) {
    const double mid = before + cost[static_cast<size_t>(i)] / 2;
    const int64_t p = total > 0 ? std::min<int64_t>(parts - 1, static_cast<int64_t>(mid / total * static_cast<double>(parts)))
                                : i * parts / items;
    while (part < p) first[static_cast<size_t>(++part)] = i;
    before += cost[static_cast<size_t>(i)];
  }
  parallel_for(0, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p)
      for (int64_t i = first[static_cast<size_t>(p)]; i < first[static_cast<size_t>(p + 1)]; ++i) fn(i);
  });
}

}  // namespace fourfold::cpu
