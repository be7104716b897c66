// fourfold check: baseline and candidate policies on the same inputs, interleaved, and all four records for
// both (DESIGN.md section 2). Records a workload cannot produce yet are left empty (throughput: until the
// decoder engine lands).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "check/records.h"
#include "check/roofline_probes.h"

namespace fourfold {

struct CheckOptions {
  std::vector<std::string> suites = {"decode-linear", "softmax", "pad", "moe", "attention", "fp8"};
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
  ProbeBudget probe_budget = ProbeBudget::quick();   // the roofline and machine-state probes
};

// progress(message) is called before each long step.
CheckResult run_check(const CheckOptions& options, const std::function<void(const std::string&)>& progress = {});

}  // namespace fourfold
