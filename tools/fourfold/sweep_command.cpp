// fourfold sweep: the reference tier against itself in float64, op by op and dtype by dtype (0 ULP expected).
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/reference_sweep.h"
#include "commands.h"

namespace fourfold::cli {
namespace {

std::string psnr_text(double db) { return std::isinf(db) && db > 0 ? "exact" : fmt::format("{:.1f}", db); }

}  // namespace

void register_sweep(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "correctness sweep of the float64 reference tier (every op, f32/bf16/f16)");
  static SweepOptions options;
  static int threads = 0;
  static std::string json_path;
  cmd->add_option("--seed", options.seed, "seed of every input");
  cmd->add_option("--op", options.only_op, "run one op's case only");
  cmd->add_option("--json", json_path, "also write the rows as JSON");
  add_threads_option(*cmd, threads);
  cmd->callback([] {
    apply_threads(threads);
    fmt::print("{:<40} {:<9} {:>9} {:>11} {:>11} {:>8}  {}\n", "op", "dtype", "max ulp", "max abs", "max rel",
               "PSNR dB", "inputs");
    int failures = 0;
    nlohmann::json rows = nlohmann::json::array();
    run_reference_sweep(options, [&](const SweepRow& r) {
      const bool ok = r.error.empty() && r.stats.exact;
      failures += ok ? 0 : 1;
      if (!r.error.empty()) {
        fmt::print("{:<40} {:<9} ERROR {}\n", r.op, r.dtype, r.error);
      } else {
        fmt::print("{:<40} {:<9} {:>9} {:>11.3g} {:>11.3g} {:>8}  {}{}\n", r.op, r.dtype, r.stats.max_ulp,
                   r.stats.max_abs, r.stats.max_rel, psnr_text(r.stats.psnr_db), r.shapes, ok ? "" : "   <-- NOT EXACT");
      }
      rows.push_back({{"op", r.op}, {"dtype", r.dtype}, {"inputs", r.shapes}, {"max_ulp", r.stats.max_ulp},
                      {"max_abs", r.stats.max_abs}, {"max_rel", r.stats.max_rel}, {"exact", r.stats.exact},
                      {"seconds", r.seconds}, {"error", r.error}});
    });
    fmt::print("\n{} rows, {} not equal to the float64 result rounded once\n", rows.size(), failures);
    if (!json_path.empty()) {
      std::ofstream(json_path) << rows.dump(2) << "\n";
    }
    set_exit_code(failures == 0 ? 0 : 1);
  });
}

}  // namespace fourfold::cli
