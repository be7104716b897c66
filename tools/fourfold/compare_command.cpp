// fourfold compare: baseline records against candidate records, each record on its own (exit 1 when a
// correctness threshold fails, 2 when the inputs cannot be compared).
#include <fmt/format.h>

#include "check/compare.h"
#include "check/records.h"
#include <limits>

#include "commands.h"
#include "core/file_io.h"

namespace fourfold::cli {

void register_compare(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "compare two record files (baseline, candidate) record by record");
  static std::string baseline_path, candidate_path, markdown_path, html_path;
  static Thresholds thresholds;
  cmd->add_option("BASE", baseline_path, "baseline records (JSON, schema fourfold.records/1)")->required();
  cmd->add_option("CAND", candidate_path, "candidate records (JSON, schema fourfold.records/1)")->required();
  cmd->add_option("--md", markdown_path, "also write the comparison as Markdown");
  cmd->add_option("--html", html_path, "also write the comparison as one self-contained HTML page");
  cmd->add_option("--psnr-drop-db", thresholds.psnr_drop_db, "correctness: largest PSNR drop that is not a regression")
      ->capture_default_str()
      ->check(finite_in(0, std::numeric_limits<double>::max()));
  cmd->add_option("--ulp-increase", thresholds.max_ulp_increase,
                  "correctness: how far a candidate outside its op's ULP bound may exceed the baseline's max ULP "
                  "and not be a regression")
      ->capture_default_str()
      ->check(finite_in(0, std::numeric_limits<double>::max()));
  cmd->callback([] {
    if (!markdown_path.empty()) check_output_path(markdown_path, "--md");
    if (!html_path.empty()) check_output_path(html_path, "--html");
    const RecordSet baseline = read_record_set(baseline_path);
    const RecordSet candidate = read_record_set(candidate_path);
    const Comparison c = compare_records(baseline, candidate, thresholds);
    fmt::print("{}", render_text(c));
    if (!markdown_path.empty()) write_text_file(markdown_path, render_markdown(c));
    if (!html_path.empty()) write_text_file(html_path, render_html(c));
    set_exit_code(c.correctness_failed() ? 1 : 0);
  });
}

}  // namespace fourfold::cli
