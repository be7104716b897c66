// The manifest: workload equality names the first differing field; other differences are listed, not refused.
#include <gtest/gtest.h>

#include "backends/cpu/isa.h"
#include "check/manifest.h"
#include "check/sample_records.h"
#include "fourfold/parallel.h"

namespace fourfold {
namespace {

TEST(Manifest, EqualWorkloadsMatch) {
  const WorkloadMatch m = workload_equal(testing::sample_workload(), testing::sample_workload());
  EXPECT_TRUE(m);
  EXPECT_TRUE(m.field.empty());
}

TEST(Manifest, FirstDifferingWorkloadFieldIsNamed) {
  Workload a = testing::sample_workload(), b = a;
  b.shapes.push_back("64x4096");
  b.repeats = 9;
  const WorkloadMatch m = workload_equal(a, b);
  EXPECT_FALSE(m);
  EXPECT_EQ(m.field, "workload.shapes");
  EXPECT_EQ(m.baseline, "[1x4096, 8x4096]");
  b = a;
  b.kind = WorkloadKind::model;
  EXPECT_EQ(workload_equal(a, b).field, "workload.kind");
  b = a;
  b.seed = 7;
  EXPECT_EQ(workload_equal(a, b).field, "workload.seed");
  b = a;
  b.context_lengths = {512};
  EXPECT_EQ(workload_equal(a, b).field, "workload.context_lengths");
}

TEST(Manifest, DifferencesListBuildMachineThreadsAndTiers) {
  Manifest a = testing::sample_manifest("generic"), b = a;
  EXPECT_TRUE(manifest_differences(a, b).empty());
  b.threads = 16;
  b.cpu_model = "Other CPU";
  b.op_tiers = {{"softmax", 0, 0, 10, "avx2"}, {"linear", 0, 4, 6, "avx2"}};
  const auto diffs = manifest_differences(a, b);
  ASSERT_EQ(diffs.size(), 3u);
  EXPECT_EQ(diffs[0].field, "cpu_model");
  EXPECT_EQ(diffs[1].field, "threads");
  EXPECT_EQ(diffs[1].baseline, "8");
  EXPECT_EQ(diffs[2].field, "op_tiers.softmax");
  EXPECT_EQ(diffs[2].baseline, "reference");
  EXPECT_EQ(diffs[2].candidate, "dedicated (avx2)");
}

TEST(Manifest, DispatchTier) {
  EXPECT_EQ(dispatch_tier({"x", 1, 0, 0, ""}), "reference");
  EXPECT_EQ(dispatch_tier({"x", 0, 0, 2, ""}), "dedicated");
  EXPECT_EQ(dispatch_tier({"x", 0, 3, 2, ""}), "mixed");
}

TEST(Manifest, CollectedFromThisProcess) {
  const Manifest m = collect_manifest(testing::sample_workload(), {"float32"});
  EXPECT_FALSE(m.fourfold_version.empty());
  EXPECT_FALSE(m.git_commit.empty());
  EXPECT_EQ(m.threads, num_threads());
  EXPECT_EQ(m.isa_variant, cpu::isa_name(cpu::active_isa()));
  EXPECT_EQ(m.device, "cpu");
  EXPECT_EQ(m.workload, testing::sample_workload());
  EXPECT_EQ(parse_workload_kind(workload_kind_name(WorkloadKind::memory)), WorkloadKind::memory);
  EXPECT_FALSE(parse_workload_kind("benchmark").has_value());
}

}  // namespace
}  // namespace fourfold
