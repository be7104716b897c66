// The registry of op case files: "registry_op_cases.h" lists every file that registers with FOURFOLD_OP_CASES
// (a static library would drop a self-registering object that nothing references, so the build lists them).
#include "check/op_cases/op_case.h"

#include <algorithm>

#include "registry_op_cases.h"

namespace fourfold {

#define FOURFOLD_DECLARE_OP_CASES(name) OpCases op_cases_##name();
FOURFOLD_REGISTRY_OP_CASES(FOURFOLD_DECLARE_OP_CASES)
#undef FOURFOLD_DECLARE_OP_CASES

namespace {

template <class F>
OpCases named(std::string_view name, F make) {
  OpCases entry = make();
  entry.name = name;
  return entry;
}

}  // namespace

const std::vector<OpCases>& all_op_cases() {
  static const std::vector<OpCases> all = {
#define FOURFOLD_CALL_OP_CASES(name) named(#name, op_cases_##name),
      FOURFOLD_REGISTRY_OP_CASES(FOURFOLD_CALL_OP_CASES)
#undef FOURFOLD_CALL_OP_CASES
  };
  return all;
}

const OpCases* find_op_cases(std::string_view name) {
  const std::vector<OpCases>& all = all_op_cases();
  const auto it = std::find_if(all.begin(), all.end(), [&](const OpCases& e) { return e.name == name; });
  return it == all.end() ? nullptr : &*it;
}

int64_t ulp_bound_of(std::string_view op) {
  const OpCases* entry = find_op_cases(op);
  return entry != nullptr ? entry->ulp_bound : kDefaultUlpBound;
}

const OpCases& op_cases_for(const BenchCase& c) {
  const RowOpCase* row = std::get_if<RowOpCase>(&c.params);
  const OpCases* entry = row != nullptr ? row->cases : find_op_cases(c.op);
  if (entry == nullptr || entry->call == nullptr || entry->cost == nullptr)
    fail<ValueError>("bench", "op", "an op whose case file (src/check/op_cases/) has an op-time call",
                     "'" + c.op + "'");
  return *entry;
}

}  // namespace fourfold
