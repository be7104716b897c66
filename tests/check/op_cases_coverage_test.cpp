// Every op in the op list has cases: at least one op-time row in the shipped suites (what `fourfold bench ops`
// and `fourfold check` time, and what the check compares with the float64 oracle) and a case in the reference
// sweep. A new line in src/backends/op_list.h fails here until both exist (docs/adding_an_op.md says where).
#include <algorithm>
#include <map>

#include "check/reference_sweep.h"
#include "check/suites.h"
#include "fourfold/policy.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

// op -> its rows in the shipped suites, "suite: name shape" of the first.
std::map<std::string, std::pair<int, std::string>> rows_per_op() {
  std::map<std::string, std::pair<int, std::string>> rows;
  const std::string dir = default_suites_dir();
  for (const std::string& name : list_suites(dir))
    for (const BenchCase& c : load_suite(name, dir).cases) {
      auto& [count, first] = rows[c.op];
      if (count++ == 0) first = c.suite + ": " + c.name + " " + c.shape;
    }
  return rows;
}

TEST(OpCases, EveryOpHasAnOpTimeRowInTheShippedSuites) {
  const auto rows = rows_per_op();
  std::vector<std::string> missing;
  for (const std::string& op : op_names())
    if (!rows.contains(op)) missing.push_back(op);
  EXPECT_TRUE(missing.empty()) << "ops with no row in data/suites: " << ::testing::PrintToString(missing);
  // And no row times an op the list does not have.
  const std::vector<std::string> ops = op_names();
  for (const auto& [op, found] : rows)
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op << " (" << found.second << ")";
}

TEST(OpCases, EveryOpHasACaseInTheReferenceSweep) {
  const std::vector<std::string> cases = sweep_case_names();
  std::vector<std::string> missing;
  for (const std::string& op : op_names())
    if (std::find(cases.begin(), cases.end(), op) == cases.end()) missing.push_back(op);
  EXPECT_TRUE(missing.empty()) << "ops with no case in src/check/reference_sweep.cpp: "
                               << ::testing::PrintToString(missing);
  const std::vector<std::string> ops = op_names();
  for (const std::string& c : cases) EXPECT_NE(std::find(ops.begin(), ops.end(), c), ops.end()) << c;
}

}  // namespace
}  // namespace fourfold
