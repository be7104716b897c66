// Records written by the PyTorch driver (python/fourfold_torch) read and compared unchanged: against
// fourfold's own records of the same workload and against another PyTorch build's. The fixtures in
// tests/data/pytorch_records come from `fourfold check --suite softmax pad --rows-per-suite 1 --repeats 2
// --no-end-to-end` (candidate.json) and `python -m fourfold_torch check` with the same arguments under
// PyTorch 2.14.1 and 2.15.0 on the CPU.
#include <gtest/gtest.h>

#include <string>

#include "check/compare.h"
#include "check/records.h"
#include "fourfold/errors.h"

namespace fourfold {
namespace {

const std::string kDir = std::string(FOURFOLD_TEST_DATA_DIR) + "/pytorch_records/";

TEST(PyTorchRecords, ReadWithTheirProducerAndTier) {
  const RecordSet torch = read_record_set(kDir + "pytorch_2.15_cpu.json");
  EXPECT_EQ(torch.manifest.producer.rfind("PyTorch 2.15.0", 0), 0u) << torch.manifest.producer;
  ASSERT_TRUE(torch.op_time && !torch.op_time->rows.empty());
  for (const OpTimeRow& r : torch.op_time->rows) EXPECT_EQ(r.tier, "pytorch");
  for (const CorrectnessRow& r : torch.correctness->ops) EXPECT_EQ(r.tier, "pytorch");
  // fourfold's own records carry no producer: the header names the build instead.
  EXPECT_EQ(read_record_set(kDir + "fourfold_dedicated.json").manifest.producer, "");
}

TEST(PyTorchRecords, CompareAgainstFourfoldPairsEveryRowAndNamesBothProducers) {
  const RecordSet ours = read_record_set(kDir + "fourfold_dedicated.json");
  const RecordSet torch = read_record_set(kDir + "pytorch_2.15_cpu.json");
  const Comparison c = compare_records(ours, torch);
  ASSERT_TRUE(c.op_time);
  EXPECT_EQ(c.op_time->rows.size(), ours.op_time->rows.size());
  EXPECT_TRUE(c.op_time->only_in_baseline.empty() && c.op_time->only_in_candidate.empty());
  for (const OpTimeDelta& d : c.op_time->rows) {
    EXPECT_EQ(d.baseline_tier, "dedicated");
    EXPECT_EQ(d.candidate_tier, "pytorch");
  }
  const std::string text = render_text(c);
  EXPECT_NE(text.find("baseline: fourfold 0.1.0"), std::string::npos) << text;
  EXPECT_NE(text.find("candidate: PyTorch 2.15.0"), std::string::npos) << text;
  EXPECT_NE(text.find("dedicated -> pytorch"), std::string::npos);
}

TEST(PyTorchRecords, TwoPyTorchBuildsCompareLikeTwoFourfoldBuilds) {
  const Comparison c = compare_records(read_record_set(kDir + "pytorch_2.14_cpu.json"),
                                       read_record_set(kDir + "pytorch_2.15_cpu.json"));
  ASSERT_TRUE(c.op_time && c.correctness && c.memory);
  EXPECT_FALSE(c.op_time->rows.empty());
  bool producer_differs = false;
  for (const ManifestDifference& d : c.differences) producer_differs |= d.field == "producer";
  EXPECT_TRUE(producer_differs);
  EXPECT_NE(render_text(c).find("baseline: PyTorch 2.14.1"), std::string::npos);
}

TEST(PyTorchRecords, ADifferentWorkloadIsRefusedByTheSameRule) {
  RecordSet torch = read_record_set(kDir + "pytorch_2.15_cpu.json");
  torch.manifest.workload.seed = 1;
  EXPECT_THROW(compare_records(read_record_set(kDir + "fourfold_dedicated.json"), torch), ValueError);
}

}  // namespace
}  // namespace fourfold
