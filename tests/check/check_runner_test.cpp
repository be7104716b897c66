// fourfold check end to end on a tiny workload: both sides measured on the same rows, all records present,
// the same workload on both sides, and the result survives its own JSON round trip.
#include <cmath>

#include "check/check_runner.h"
#include "check/compare.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

CheckOptions tiny_options() {
  CheckOptions o;
  o.suites = {"softmax", "pad"};
  o.rows_per_suite = 1;
  o.repeats = 2;
  o.memory_tiles = 3;
  o.reference_work_cap = 1e5;   // nothing fits: each suite contributes its smallest row
  o.probe_budget = ProbeBudget::tiny();
  o.baseline = "reference";
  o.candidate = "softmax=generic,pad=generic";   // no generic tier yet: falls back, and the manifest says so
  return o;
}

TEST(CheckRunner, WritesAllMeasuredRecordsForBothSides) {
  const CheckResult r = run_check(tiny_options());
  for (const RecordSet* s : {&r.baseline, &r.candidate}) {
    ASSERT_TRUE(s->op_time.has_value());
    ASSERT_TRUE(s->correctness.has_value());
    ASSERT_TRUE(s->memory.has_value());
    EXPECT_FALSE(s->throughput.has_value());   // no decoder yet
    ASSERT_EQ(s->op_time->rows.size(), 2u);    // one row per suite, the smallest
    EXPECT_EQ(s->op_time->rows[0].suite, "softmax");
    EXPECT_EQ(s->op_time->rows[1].op, "constant_pad_nd");
    for (const OpTimeRow& row : s->op_time->rows) {
      EXPECT_EQ(row.samples_us.size(), 2u);
      EXPECT_GT(row.median_us, 0.0);
      EXPECT_EQ(row.tier, "reference");
      ASSERT_TRUE(row.roofline_percent.has_value());
      EXPECT_GT(*row.roofline_percent, 0.0);
    }
    for (const CorrectnessRow& row : s->correctness->ops) {
      EXPECT_TRUE(row.exact) << row.op;   // the reference tier rounds the float64 result once
      EXPECT_EQ(row.max_ulp, 0);
    }
    EXPECT_GT(s->memory->reserved_peak_bytes, 0u);
    EXPECT_GE(s->memory->reserved_peak_bytes, s->memory->allocated_peak_bytes);
    EXPECT_GT(s->memory->process_peak_bytes, 0u);
    ASSERT_TRUE(s->manifest.machine_before.read_bandwidth_gb_per_s.has_value());
    EXPECT_GT(*s->manifest.machine_before.read_bandwidth_gb_per_s, 0.0);
  }
  EXPECT_TRUE(workload_equal(r.baseline.manifest.workload, r.candidate.manifest.workload));
  EXPECT_EQ(r.baseline.manifest.policy, "all=reference");
  EXPECT_EQ(r.candidate.manifest.policy, "constant_pad_nd=generic,softmax=generic");
  // The same rows in the same order on both sides: compare pairs them and finds no regression.
  const Comparison c = compare_records(r.baseline, r.candidate);
  EXPECT_FALSE(c.correctness_failed());
  EXPECT_EQ(parse_check_result(to_json_text(r), "round trip"), r);
}

TEST(CheckRunner, BadArgumentsAreClearErrors) {
  CheckOptions o = tiny_options();
  o.suites = {"no-such-suite"};
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { run_check(o); }, {"no-such-suite"}));
  o = tiny_options();
  o.baseline = "softmax=fastest";
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { run_check(o); }, {"policy", "'fastest'"}));
}

}  // namespace
}  // namespace fourfold
