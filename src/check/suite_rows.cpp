#include "check/suite_rows.h"

#include "check/op_bench.h"
#include "check/op_cases/op_case.h"
#include "check/records.h"

namespace fourfold {

nlohmann::ordered_json suite_row_json(const BenchCase& c) {
  const OpCost cost = op_cost(c);
  return {{"suite", c.suite},
          {"op", c.op},
          {"case", op_cases_for(c).name},
          {"name", c.name},
          {"shape", c.shape},
          {"dtype", dtype_name(c.dtype)},
          {"params", case_params_json(c.params)},
          {"bytes_read", cost.bytes_read},
          {"bytes_written", cost.bytes_written},
          {"bytes_made", cost.bytes_made},
          {"flops", cost.flops},
          {"work", case_work(c)}};
}

nlohmann::ordered_json suite_rows_document(const std::vector<std::string>& suites, nlohmann::ordered_json rows) {
  return {{"schema", kRecordsSchema}, {"kind", "suite_rows"}, {"suites", suites}, {"rows", std::move(rows)}};
}

std::string suite_rows_text(const nlohmann::ordered_json& document) {
  std::string text = "{";
  for (const auto& [key, value] : document.items()) {
    if (text.size() > 1) text += ",";
    text += "\n " + nlohmann::ordered_json(key).dump() + ": ";
    if (key != "rows") {
      text += value.dump();
      continue;
    }
    text += "[";
    for (size_t i = 0; i < value.size(); ++i) text += (i ? ",\n  " : "\n  ") + value[i].dump();
    text += "\n ]";
  }
  return text + "\n}\n";
}

}  // namespace fourfold
