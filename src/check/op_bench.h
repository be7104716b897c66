// One row of the op-time record (DESIGN.md section 2.2): builds a suite case's inputs, times the op through
// the public API under the current policy, and relates the time to the roofline probed in this process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "check/op_timer.h"
#include "check/roofline_probes.h"
#include "check/suites.h"
#include "fourfold/policy.h"

namespace fourfold {

// What an op must move and compute at the least: each input read once, each output written once (bytes of
// the logical tensors in their dtypes; a strided input counts its elements, not the buffer around them),
// and 2 flops per multiply-add of the matrix products it contains. Elementwise work (exp, max, the bias
// add, scaling) is not counted: ops without a matrix product have flops = 0 and their roofline is bandwidth.
// Per op (s = element size):
//   linear                   read (M*K + N*K [+ N]) * s, write M*N * s, flops 2*M*N*K
//   softmax                  read R*C * s, write R*C * s
//   constant_pad_nd          read numel(x) * s, write numel(out) * s
//   grouped_mm (moe)         read (A*K + G_active*K*N) * s + 4*G, write A*N * s, flops 2*A*N*K, where A = tokens*top_k
//                            rows and G_active = experts with at least one row (an idle expert's weights need
//                            not be read)
//   moe_experts (moe)        read (T*H + 3*G_active*I*H) * s + 4*(2*A + G), write T*H * s, flops 6*A*I*H
//                            (T tokens, the case's k = H and n = I; the h = silu(gate) * up temporary is not
//                            counted: it stays in the caches)
//   scaled_dot_product_attn  read (q + k + v) * s (k, v once: GQA shares them), write out * s,
//                            flops 2 * B * Hq * P * (E + Ev), P = attended (query, key) pairs (L*S without a
//                            mask; causal counts only the pairs the mask keeps)
//   scaled_mm (fp8)          read M*K + N*K bytes + 4 * (scale elements), write M*N * out size, flops 2*M*N*K
struct OpCost {
  double bytes_read = 0.0;
  double bytes_written = 0.0;
  double flops = 0.0;
  // Input bytes a row makes that the op need not read (embedding: the table rows no id picks). Not part of
  // the roofline; counted where the inputs' size matters: rotation copies and the reference cap's work.
  double bytes_made = 0.0;
  double bytes() const { return bytes_read + bytes_written; }
};
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

// A benchmark input: element i is float((2 u(seed, i) - 1) * scale), u = counter_uniform, stored rounded to
// nearest even in `dtype`. Other producers of records (python/fourfold_torch) make the same bytes from it;
// tests/data/bench_inputs/golden.json pins both.
Tensor bench_tensor(const Shape& shape, DType dtype, uint64_t seed, double scale = 1.0);

// One case's inputs, made once from the seed, and the call that runs the op on them and returns its output.
// float64_oracle: the same values widened to float64 (FP8 operands stay FP8; the output is float64), which
// is what the correctness record compares each tier's output with.
using BenchCall = std::function<Tensor()>;
BenchCall make_bench_call(const BenchCase& c, uint64_t seed, bool float64_oracle = false);

// Never throws for a failing op: the message goes to row.error. Frees the allocator's cache afterwards.
BenchRow run_bench_case(const BenchCase& c, const RooflineProbe& probe, const BenchOptions& options);

}  // namespace fourfold
