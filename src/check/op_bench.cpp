#include "check/op_bench.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>

#include <fmt/format.h>

#include "check/op_cases/op_case.h"
#include "fourfold/allocator.h"
#include "ops/dispatch.h"

namespace fourfold {

BenchCall make_bench_call(const BenchCase& c, uint64_t seed, bool float64_oracle) {
  return op_cases_for(c).call(c, BenchInputs(c.dtype, seed, float64_oracle));
}

OpCost op_cost(const BenchCase& c) { return op_cases_for(c).cost(c); }

namespace {

using Call = std::function<void()>;

Call build_call(const BenchCase& c, uint64_t seed) {
  BenchCall produce = make_bench_call(c, seed);
  return [produce] { produce(); };
}

bool tier_has_kernel(Tier tier, std::string_view op) {
  const KernelTable* table = kernel_table(tier);
  if (table == nullptr) return false;
#define FOURFOLD_HAS_KERNEL(name, Args) \
  if (op == #name) return table->name.run != nullptr;
  FOURFOLD_OP_LIST(FOURFOLD_HAS_KERNEL)
#undef FOURFOLD_HAS_KERNEL
  return false;
}

}  // namespace

double case_work(const BenchCase& c) {
  const OpCost cost = op_cost(c);
  return cost.flops / 2.0 + (cost.bytes() + cost.bytes_made) / static_cast<double>(dtype_size(c.dtype));
}

RooflinePoint roofline_point(const OpCost& cost, double seconds, const RooflineProbe& probe) {
  RooflinePoint r;
  if (!(seconds > 0)) return r;
  r.gbs = cost.bytes() / seconds / 1e9;
  r.gflops = cost.flops / seconds / 1e9;
  const double t_memory = cost.bytes_read / (probe.read_gbs.median * 1e9) + cost.bytes_written / (probe.write_gbs.median * 1e9);
  const double t_compute = cost.flops / (probe.fma_gflops.median * 1e9);
  r.bandwidth_gbs = t_memory > 0 ? cost.bytes() / t_memory / 1e9 : 0.0;
  r.compute_bound = t_compute > t_memory;
  const double floor = std::max(t_memory, t_compute);
  r.floor_us = floor * 1e6;
  r.fraction = floor / seconds;
  return r;
}

Tier expected_tier(std::string_view op) {
  const std::optional<Tier> forced = current_policy().forced_for(op);
  for (int t = static_cast<int>(forced.value_or(Tier::dedicated)); t > 0; --t)
    if (tier_has_kernel(static_cast<Tier>(t), op)) return static_cast<Tier>(t);
  return Tier::reference;
}

std::optional<TierRan> tier_that_ran(std::string_view op) {
  for (const DispatchCount& d : dispatch_counts()) {
    if (d.op != op) continue;
    const int most = static_cast<int>(std::max_element(std::begin(d.calls), std::end(d.calls)) - std::begin(d.calls));
    return TierRan{std::string(tier_name(static_cast<Tier>(most))), d.last_variant};
  }
  return std::nullopt;
}

int rotation_copies(const OpCost& cost, size_t rotate_bytes, int max_copies) {
  if (rotate_bytes == 0) return 1;
  const double input_bytes = std::max(cost.bytes_read + cost.bytes_made, 1.0);
  return static_cast<int>(std::clamp(std::ceil(static_cast<double>(rotate_bytes) / input_bytes), 1.0,
                                     static_cast<double>(std::max(max_copies, 1))));
}

BenchRow run_bench_case(const BenchCase& c, const RooflineProbe& probe, const BenchOptions& options) {
  BenchRow row;
  row.bench_case = c;
  row.cost = op_cost(c);
  const double work = case_work(c);
  const bool on_reference = expected_tier(c.op) == Tier::reference;
  if (options.reference_work_cap > 0 && work > options.reference_work_cap && on_reference) {
    row.skipped = fmt::format("reference tier: work {:.2g} > cap {:.2g}", work, options.reference_work_cap);
    return row;
  }
  try {
    std::vector<Call> calls;
    calls.push_back(build_call(c, options.seed));
    const int copies = on_reference ? 1 : rotation_copies(row.cost, options.rotate_bytes, options.max_copies);
    for (int i = 1; i < copies; ++i) calls.push_back(build_call(c, rotation_seed(options.seed, i)));
    row.copies = copies;
    size_t next = 0;
    reset_dispatch_counts();
    row.timing = time_op([&] {
      calls[next]();
      next = next + 1 == calls.size() ? 0 : next + 1;
    }, options.timer);
    if (const std::optional<TierRan> ran = tier_that_ran(c.op)) {
      row.tier = ran->tier;
      row.variant = ran->variant;
    }
    row.roof = roofline_point(row.cost, row.timing.median_us * 1e-6, probe);
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  cpu_allocator().empty_cache();
  return row;
}

}  // namespace fourfold
