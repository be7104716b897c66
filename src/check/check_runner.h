// fourfold check: baseline and candidate policies on the same inputs, interleaved, and all four records for
// both (DESIGN.md section 2). Throughput, the logits row of correctness and the model memory record come from
// the end-to-end decoder workload (end_to_end_workload.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "check/end_to_end_workload.h"
#include "check/records.h"
#include "check/roofline_probes.h"
#include "check/vae_workload.h"

namespace fourfold {

struct CheckOptions {
  std::vector<std::string> suites = {"decode-linear", "prefill-linear", "softmax", "pad", "moe", "attention", "fp8",
                                     "decoder-fused", "backward", "complex-matmul", "linear-attention"};
  std::string baseline = "generic";    // policies (fourfold/policy.h syntax)
  std::string candidate = "dedicated";
  int repeats = 5;                     // A B pairs per row; each sample a batch of calls of >= 1 ms
  uint64_t seed = 0;
  // Rows of each suite taken, in file order, after dropping those whose float64 reference work exceeds
  // reference_work_cap (the oracle runs on every row); a suite with no row under the cap contributes its
  // smallest row, so every suite is measured. 0: all rows.
  int rows_per_suite = 6;
  double reference_work_cap = 3e6;
  int memory_tiles = 48;
  // Op-time inputs rotate over sets that together hold at least this many bytes (op_bench.h's rule), so that
  // decode-shaped rows read their weights from memory as a decode step does, not from the caches: 128 MiB is
  // DESIGN.md 2.2's 4x the last-level cache (a Zen 4 chiplet's 32 MiB L3). 0 (--hot): one set, caches warm.
  // The row records which (input_copies).
  size_t rotate_bytes = size_t{128} << 20;
  ProbeBudget probe_budget = ProbeBudget::quick();   // the roofline and machine-state probes
  // The decoder end to end (throughput, logits against the reference tier, model memory).
  EndToEndOptions end_to_end;
  // The VAE workload (frames/s of a tiled decode, its memory, decode and round-trip correctness).
  VaeWorkloadOptions vae;
};

// progress(message) is called before each long step.
CheckResult run_check(const CheckOptions& options, const std::function<void(const std::string&)>& progress = {});

}  // namespace fourfold
