// The rows file the Python driver reads (python/fourfold_torch/data/suite_rows.json) is what fourfold reads from
// the shipped suites today, and each row carries the parameters its PyTorch call is built from.
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>

#include "check/op_cases/op_case.h"
#include "check/records.h"
#include "check/suite_rows.h"
#include "check/suites.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

const char* kRowsFile = FOURFOLD_TEST_DATA_DIR "/../../python/fourfold_torch/data/suite_rows.json";

std::string shipped_text() {
  std::ifstream in(kRowsFile);
  EXPECT_TRUE(in.good()) << kRowsFile;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::ordered_json fresh_rows() {
  const std::string dir = default_suites_dir();
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const std::vector<std::string> names = list_suites(dir);
  for (const std::string& name : names)
    for (const BenchCase& c : load_suite(name, dir).cases) rows.push_back(suite_row_json(c));
  return suite_rows_document(names, std::move(rows));
}

TEST(SuiteRows, TheShippedFileIsFresh) {
  const std::string text = shipped_text();
  const nlohmann::ordered_json shipped = nlohmann::ordered_json::parse(text), fresh = fresh_rows();
  ASSERT_EQ(shipped["rows"].size(), fresh["rows"].size())
      << "stale: write it again with `build/release/fourfold bench ops --list --json "
      << "python/fourfold_torch/data/suite_rows.json`";
  for (size_t i = 0; i < fresh["rows"].size(); ++i)
    ASSERT_EQ(shipped["rows"][i], fresh["rows"][i])
        << "row " << i << " is stale: write the file again with `build/release/fourfold bench ops --list --json "
        << "python/fourfold_torch/data/suite_rows.json`";
  EXPECT_EQ(shipped, fresh);
  EXPECT_EQ(text, suite_rows_text(fresh)) << "the same rows, written otherwise: write the file again with fourfold";
}

TEST(SuiteRows, EachRowCarriesItsParametersAndCost) {
  const nlohmann::ordered_json doc = fresh_rows();
  EXPECT_EQ(doc["schema"], std::string(kRecordsSchema));
  EXPECT_EQ(doc["kind"], "suite_rows");
  int moe_rows = 0;
  for (const auto& row : doc["rows"]) {
    for (const char* key : {"suite", "op", "case", "name", "shape", "dtype", "params", "bytes_read", "bytes_written",
                            "bytes_made", "flops", "work"})
      ASSERT_TRUE(row.contains(key)) << key << " in " << row.dump();
    EXPECT_GT(row["bytes_read"].get<double>() + row["bytes_written"].get<double>(), 0.0) << row.dump();
    if (row["suite"] == "moe") {
      // The routing comes with the row, so that the Python side need not route the tokens again.
      const auto& p = row["params"];
      const std::vector<int64_t> sizes = p["group_sizes"].get<std::vector<int64_t>>();
      EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), int64_t{0}),
                p["tokens"].get<int64_t>() * p["top_k"].get<int64_t>());
      ++moe_rows;
    }
  }
  EXPECT_GT(moe_rows, 0);
}

TEST(SuiteRows, ARowOpRowNamesItsCaseFileAndTheOpItTimes) {
  const Suite s = parse_suite(R"({"suite": "t", "op": "row_ops", "dtypes": ["bf16"], "cases": [
      {"op": "add_rms_norm", "name": "x", "rows": 2, "cols": 64}]})", "t.json");
  const nlohmann::ordered_json row = suite_row_json(s.cases.at(0));
  EXPECT_EQ(row["case"], "add_rms_norm");
  EXPECT_EQ(row["op"], "rms_norm");
  EXPECT_EQ(row["params"]["rows"], 2);
  EXPECT_EQ(row["params"]["cols"], 64);
  EXPECT_EQ(row["dtype"], "bfloat16");
}

TEST(SuiteRows, EachSuiteFormatHasOneReader) {
  std::set<std::string_view> formats = {"row_ops"};   // check/suites.cpp's own
  for (const OpCases& e : all_op_cases())
    if (e.suite.parse != nullptr) EXPECT_TRUE(formats.insert(e.suite.name).second) << e.suite.name << " read twice";
  for (const char* shipped : {"linear", "softmax", "constant_pad_nd", "grouped_mm", "scaled_dot_product_attention",
                              "scaled_mm", "conv"})
    EXPECT_TRUE(formats.count(shipped)) << shipped;
}

}  // namespace
}  // namespace fourfold
