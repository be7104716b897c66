// `fourfold bench ops --json` as a user calls it: the op-time record set on the versioned schema
// (docs/records_schema.md), which the records reader and `fourfold compare` take like the check's own.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "check/records.h"
#include "model/temp_dirs.h"
#include "tools/cli_runner.h"

namespace fourfold {
namespace {

namespace fs = std::filesystem;

const model::testing::TempDirs kTemp("fourfold_bench_command_test");

using fourfold::testing::fourfold;

TEST(BenchOps, JsonIsAnOpTimeRecordSetThatCompareReads) {
  const fs::path out = kTemp.make("_ops") / "softmax.json";
  const auto r = fourfold("bench ops --suite softmax --match 'x[1,32000]' --quick --probe-small-pages --threads 1 --json " +
                          out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  const RecordSet records = read_record_set(out.string());
  ASSERT_TRUE(records.op_time.has_value());
  EXPECT_FALSE(records.throughput || records.correctness || records.memory);
  ASSERT_FALSE(records.op_time->rows.empty());
  EXPECT_GT(*records.op_time->peak_read_gb_per_s, 0.0);
  for (const OpTimeRow& row : records.op_time->rows) {
    EXPECT_EQ(row.suite, "softmax");
    EXPECT_NE(row.shape.find("x[1,32000]"), std::string::npos) << row.shape;
    EXPECT_FALSE(row.tier.empty());
    EXPECT_EQ(row.samples_us.size(), 3u);   // --quick: R 3
    EXPECT_GT(row.median_us, 0.0);
    EXPECT_GT(row.bytes, 0.0);
  }
  EXPECT_EQ(records.manifest.workload.name, "softmax");
  EXPECT_EQ(records.manifest.workload.shapes.size(), records.op_time->rows.size());
  EXPECT_TRUE(records.manifest.machine_before.read_bandwidth_gb_per_s.has_value());
  const auto compared = fourfold("compare " + out.string() + " " + out.string());
  EXPECT_EQ(compared.status, 0) << compared.out;
}

TEST(BenchOps, ProbesOnlyJsonHoldsThePeaksAndNoRows) {
  const fs::path out = kTemp.make("_probes") / "probes.json";
  const auto r = fourfold("bench ops --probes-only --quick --probe-small-pages --threads 1 --json " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  const RecordSet records = read_record_set(out.string());
  ASSERT_TRUE(records.op_time.has_value());
  EXPECT_TRUE(records.op_time->rows.empty());
  EXPECT_GT(*records.op_time->peak_gflop_per_s, 0.0);
}

}  // namespace
}  // namespace fourfold
