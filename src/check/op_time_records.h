// The op-time record (DESIGN.md section 2.2) on the versioned record schema, from timed suite rows: the one way
// `fourfold check` and `fourfold bench ops --json` spell a row.
#pragma once

#include <string>
#include <vector>

#include "check/manifest.h"
#include "check/op_bench.h"
#include "check/records.h"
#include "check/roofline_probes.h"

namespace fourfold {

// A row's identity (suite, op, "<source> <shape>", dtype), before anything ran.
OpTimeRow op_time_row_header(const BenchCase& c);

// The workload of op-suite rows, as the manifest says it: the suites joined by '+', the seed and repeats, each
// case as "<suite>: <source> <shape> <dtype>"; and the cases' dtypes in first-seen order.
struct OpSuiteWorkload {
  Workload workload;
  std::vector<std::string> dtypes;
};
OpSuiteWorkload op_suite_workload(const std::vector<BenchCase>& cases, const std::vector<std::string>& suites,
                                  uint64_t seed, int64_t repeats);

// A row that ran (BenchRow::ran()): its samples, batch, input copies and roofline point.
OpTimeRow op_time_row(const BenchRow& r);

// A record set holding only the op-time record of `rows` (those that ran; skipped and failed rows are not
// records) with its manifest: the suites run, the seed and repeats, the policy, the probes' read bandwidth and
// thread latency as the machine state.
RecordSet op_time_record_set(const std::vector<BenchRow>& rows, const RooflineProbe& probe,
                             const std::vector<std::string>& suites, uint64_t seed, int64_t repeats);

}  // namespace fourfold
