#include "check/reference_sweep.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "check/op_cases/op_case.h"
#include "fourfold/errors.h"
#include "fourfold/policy.h"

namespace fourfold {
namespace {

// The case files that hold correctness cases, in op-list order (a name the list lacks goes last; the
// op-cases coverage test refuses it).
std::vector<const OpCases*> sweep_entries() {
  const std::vector<std::string> ops = op_names();
  const auto position = [&](const OpCases* e) { return std::find(ops.begin(), ops.end(), e->op) - ops.begin(); };
  std::vector<const OpCases*> entries;
  for (const OpCases& e : all_op_cases())
    if (!e.sweep.empty()) entries.push_back(&e);
  std::stable_sort(entries.begin(), entries.end(),
                   [&](const OpCases* a, const OpCases* b) { return position(a) < position(b); });
  return entries;
}

}  // namespace

std::vector<std::string> sweep_case_names() {
  std::vector<std::string> names;
  for (const OpCases* e : sweep_entries())
    for (size_t i = 0; i < e->sweep.size(); ++i) names.emplace_back(e->op);
  return names;
}

std::vector<SweepRow> run_reference_sweep(const SweepOptions& options,
                                          const std::function<void(const SweepRow&)>& on_row) {
  ScopedPolicy reference_only(Policy::parse("reference"));
  std::vector<SweepRow> rows;
  bool matched = false;
  for (const OpCases* entry : sweep_entries()) {
    if (!options.only_op.empty() && options.only_op != entry->op) continue;
    for (const SweepCase& c : entry->sweep) {
      matched = true;
      for (DType dtype : options.dtypes) {
        SweepRow row{std::string(entry->op), std::string(dtype_name(dtype)), c.shapes, {}, c.max_ulp, 0.0, ""};
        try {
          SweepInputs low(dtype, dtype, options.seed);
          SweepInputs wide(dtype, DType::f64, options.seed);
          const auto t0 = std::chrono::steady_clock::now();
          Tensor out = c.run(low);
          row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          Tensor oracle = c.run(wide);
          row.stats = compare_to_reference(out, oracle);
        } catch (const Error& e) {
          row.error = e.what();
        }
        if (on_row) on_row(row);
        rows.push_back(std::move(row));
      }
    }
  }
  if (!matched)
    fail<ValueError>("sweep", "--op", fmt::format("one of the sweep's ops ({} cases)", sweep_case_names().size()),
                     fmt::format("'{}'", options.only_op));
  return rows;
}

}  // namespace fourfold
