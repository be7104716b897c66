// The reference-tier correctness sweep: every op on seeded inputs in f32, bf16 and f16, each compared with the
// same op run in float64 on the same (rounded) inputs. The cases are the op case files' (src/check/op_cases/).
// The reference computes in double and rounds once, so each result must equal the float64 result rounded to
// the output dtype: 0 ULP. Anything else is a bug in the oracle, which everything else is measured against; the
// one exception is an op whose definition rounds inside (its case states the ULPs, SweepCase::max_ulp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "check/error_metrics.h"
#include "fourfold/tensor.h"

namespace fourfold {

struct SweepRow {
  std::string op;          // op name as in the op list
  std::string dtype;       // the input dtype of the run
  std::string shapes;      // a short description of the inputs
  ErrorStats stats;        // against the float64 run
  int64_t max_ulp = 0;     // what the case allows (SweepCase::max_ulp)
  bool ok() const { return error.empty() && (stats.exact || stats.max_ulp <= max_ulp); }
  double seconds = 0.0;    // wall time of the low-precision run
  std::string error;       // set when the op threw
};

struct SweepOptions {
  uint64_t seed = 0;
  std::vector<DType> dtypes = {DType::f32, DType::bf16, DType::f16};
  std::string only_op;     // empty: every case
};

std::vector<SweepRow> run_reference_sweep(const SweepOptions& options,
                                          const std::function<void(const SweepRow&)>& on_row = {});
// The op of each case, in the order the sweep runs them (op-list order).
std::vector<std::string> sweep_case_names();

}  // namespace fourfold
