// One row of the op-time record (DESIGN.md section 2.2): builds a suite case's inputs, times the op through
// the public API under the current policy, and relates the time to the roofline probed in this process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "check/bench_inputs.h"
#include "check/op_cost.h"
#include "check/op_timer.h"
#include "check/roofline_probes.h"
#include "check/suites.h"
#include "fourfold/policy.h"

namespace fourfold {

// The least bytes and flops of a row, by its op's rule (src/check/op_cases/<op>.cpp).
OpCost op_cost(const BenchCase& c);

// The roofline of one call, from the probes of the same process:
//   t_memory  = bytes_read / read_bandwidth + bytes_written / write_bandwidth
//   t_compute = flops / fma_peak
//   fraction  = max(t_memory, t_compute) / t_measured
// i.e. achieved / min(bandwidth ceiling, compute ceiling) in the usual roofline form, with the bandwidth
// ceiling of a row being its mix of read and write probe figures: (R + W) / t_memory. The probe medians
// are the ceilings. Working sets that stay in the caches can exceed 100%: the ceiling is memory's.
struct RooflinePoint {
  double gbs = 0.0;            // (bytes_read + bytes_written) / t_measured / 1e9
  double gflops = 0.0;         // flops / t_measured / 1e9
  double bandwidth_gbs = 0.0;  // this row's bandwidth ceiling
  double floor_us = 0.0;       // max(t_memory, t_compute)
  double fraction = 0.0;
  bool compute_bound = false;  // t_compute > t_memory
};
RooflinePoint roofline_point(const OpCost& cost, double seconds_per_call, const RooflineProbe& probe);

// The tier a call of `op` would run on under the current policy, if the kernel covers the call: the forced
// tier, or the fastest one, walking down to the first tier that has a kernel for the op.
Tier expected_tier(std::string_view op);

// The tier that served most calls of `op` since the dispatch counters were last reset (ties: the slower
// tier), with its last kernel variant; nullopt when the op did not run.
struct TierRan {
  std::string tier, variant;
};
std::optional<TierRan> tier_that_ran(std::string_view op);

struct BenchOptions {
  TimerOptions timer;
  uint64_t seed = 0;
  // Inputs rotate over enough copies that together they hold at least this many bytes (at most max_copies),
  // so that a call finds its inputs in memory, not in the caches the previous call left them in: a decode
  // step reads each layer's weights once. 0: one copy, hot caches. Rows expected on the reference tier get
  // one copy: at 100-1000x below memory speed their cache state does not show, and copies only cost time.
  size_t rotate_bytes = size_t{256} << 20;
  int max_copies = 64;
  // Rows expected to run on the float64 reference tier are skipped above this much work (multiply-adds +
  // elements moved, see case_work). The reference does about 3e7-1.2e8 of these per second here, so the
  // default keeps a call under ~0.2 s and all suites (85 of 615 rows) to about a minute. 0: no cap.
  double reference_work_cap = 5e6;
};

// How many input sets a row rotates over so that together they hold at least rotate_bytes (at most max_copies;
// 1 when rotate_bytes is 0). bench ops and check use this one rule.
int rotation_copies(const OpCost& cost, size_t rotate_bytes, int max_copies);
// The seed of input copy `copy` (copy 0 is the row's own seed, the one the correctness record checks).
inline uint64_t rotation_seed(uint64_t seed, int copy) { return seed + 1000 * static_cast<uint64_t>(copy); }

// Multiply-adds + elements read, written and made (bytes_made): the size measure the reference cap uses.
double case_work(const BenchCase& c);

struct BenchRow {
  BenchCase bench_case;
  std::string tier;            // the tier that ran, from the dispatch counters ("" when not run)
  std::string variant;         // its kernel variant, when the tier names one
  OpCost cost;
  OpTiming timing;
  RooflinePoint roof;
  int copies = 1;              // input copies rotated over
  std::string skipped;         // why the row did not run (cap), "" when it ran
  std::string error;           // the op's exception message, "" when it ran
  bool ran() const { return skipped.empty() && error.empty(); }
};

// One case's inputs, made once from the seed, and the call that runs the op on them and returns its output
// (its op's case file builds both). float64_oracle: the same values widened to float64 (FP8 operands stay FP8;
// the output is float64), which is what the correctness record compares each tier's output with.
BenchCall make_bench_call(const BenchCase& c, uint64_t seed, bool float64_oracle = false);

// Never throws for a failing op: the message goes to row.error. Frees the allocator's cache afterwards.
BenchRow run_bench_case(const BenchCase& c, const RooflineProbe& probe, const BenchOptions& options);

}  // namespace fourfold
