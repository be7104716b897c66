// Every op in the op list has cases, all in its case file src/check/op_cases/<op>.cpp (registered with
// FOURFOLD_OP_CASES): correctness cases for the reference sweep, and at least one op-time row in the shipped
// suites (what `fourfold bench ops` and `fourfold check` time, and what the check compares with the float64
// oracle) that a case file's call builds. A new line in src/backends/op_list.h fails here until they exist
// (docs/adding_an_op.md, step 7).
#include <algorithm>
#include <map>
#include <set>

#include "check/op_cases/op_case.h"
#include "check/reference_sweep.h"
#include "check/suites.h"
#include "fourfold/policy.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

bool in_op_list(std::string_view op) {
  const std::vector<std::string> ops = op_names();
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

struct ShippedRows {
  std::map<std::string, std::pair<int, std::string>> per_op;   // op -> rows, "suite: name shape" of the first
  std::set<std::string> entries;                               // the case files whose call built a row
};

ShippedRows shipped_rows() {
  ShippedRows rows;
  const std::string dir = default_suites_dir();
  for (const std::string& name : list_suites(dir))
    for (const BenchCase& c : load_suite(name, dir).cases) {
      auto& [count, first] = rows.per_op[c.op];
      if (count++ == 0) first = c.suite + ": " + c.name + " " + c.shape;
      rows.entries.emplace(op_cases_for(c).name);
    }
  return rows;
}

TEST(OpCases, EveryOpHasACaseFile) {
  std::vector<std::string> missing;
  for (const std::string& op : op_names()) {
    const OpCases* entry = find_op_cases(op);
    if (entry == nullptr) {
      missing.push_back(op);
    } else {
      EXPECT_EQ(entry->op, op) << "src/check/op_cases/" << op << ".cpp names another op";
    }
  }
  EXPECT_TRUE(missing.empty()) << "ops with no FOURFOLD_OP_CASES file in src/check/op_cases/: "
                               << ::testing::PrintToString(missing);
  for (const OpCases& e : all_op_cases()) {
    EXPECT_TRUE(in_op_list(e.op)) << e.name << " times " << e.op << ", which the op list lacks";
    EXPECT_EQ(e.call == nullptr, e.cost == nullptr) << e.name << ": a call needs its cost, and a cost its call";
    if (e.is_row_op()) {
      EXPECT_NE(e.call, nullptr) << e.name << " reads row_ops cases but has no call";
    }
  }
}

TEST(OpCases, EveryOpHasACaseInTheReferenceSweep) {
  const std::vector<std::string> cases = sweep_case_names();
  std::vector<std::string> missing;
  for (const std::string& op : op_names())
    if (std::find(cases.begin(), cases.end(), op) == cases.end()) missing.push_back(op);
  EXPECT_TRUE(missing.empty()) << "ops with no sweep case in src/check/op_cases/<op>.cpp: "
                               << ::testing::PrintToString(missing);
  // One file holds an op's correctness cases: the one named after it.
  for (const OpCases& e : all_op_cases()) {
    if (!e.sweep.empty()) {
      EXPECT_EQ(e.name, e.op) << "sweep cases of " << e.op << " belong in " << e.op << ".cpp";
    }
  }
  EXPECT_TRUE(std::is_sorted(cases.begin(), cases.end(), [](const std::string& a, const std::string& b) {
    const std::vector<std::string> ops = op_names();
    return std::find(ops.begin(), ops.end(), a) < std::find(ops.begin(), ops.end(), b);
  })) << "the sweep runs in op-list order";
}

// compare reads an op's ULP bound from the file named as the op (ulp_bound_of): one stated elsewhere would be
// silently ignored.
TEST(OpCases, UlpBoundsAreStatedWhereCompareReadsThem) {
  for (const OpCases& e : all_op_cases()) {
    EXPECT_GE(e.ulp_bound, 0) << e.name;
    if (e.name != e.op) {
      EXPECT_EQ(e.ulp_bound, kDefaultUlpBound) << "the ULP bound of " << e.op << " belongs in " << e.op << ".cpp";
    }
  }
}

TEST(OpCases, EveryOpHasAnOpTimeRowInTheShippedSuites) {
  const ShippedRows rows = shipped_rows();
  std::vector<std::string> missing;
  for (const std::string& op : op_names())
    if (!rows.per_op.contains(op)) missing.push_back(op);
  EXPECT_TRUE(missing.empty()) << "ops with no row in data/suites: " << ::testing::PrintToString(missing);
  // And no row times an op the list does not have.
  for (const auto& [op, found] : rows.per_op) EXPECT_TRUE(in_op_list(op)) << op << " (" << found.second << ")";
  // A case file's call is used by a shipped row: one that no suite reaches is dead.
  for (const OpCases& e : all_op_cases()) {
    if (e.call != nullptr) {
      EXPECT_TRUE(rows.entries.contains(std::string(e.name))) << e.name << ": no row in data/suites";
    }
  }
}

}  // namespace
}  // namespace fourfold
