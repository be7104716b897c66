// fourfold sweep: the reference tier against itself in float64, op by op and dtype by dtype (0 ULP expected).
#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "check/reference_sweep.h"
#include "commands.h"
#include "core/file_io.h"
#include "fourfold/errors.h"
#include "fourfold/allocator.h"
#include "fourfold/memory_probe.h"

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
    if (!json_path.empty()) check_output_path(json_path, "--json");
    if (!options.only_op.empty()) {
      const auto names = sweep_case_names();
      if (std::find(names.begin(), names.end(), options.only_op) == names.end())
        fail<ValueError>("sweep", "--op", fmt::format("one of: {}", fmt::join(names, ", ")),
                         fmt::format("'{}'", options.only_op));
    }
    // The sweep doubles as the small scripted workload of the memory levels (DESIGN.md 2.4).
    const bool peak_reset = reset_process_peak();
    cpu_allocator().reset_peak();
    const ProcessMemory before = read_process_memory();
    fmt::print("{:<40} {:<9} {:>9} {:>11} {:>11} {:>8}  {}\n", "op", "dtype", "max ulp", "max abs", "max rel",
               "PSNR dB", "inputs");
    int failures = 0;
    nlohmann::json rows = nlohmann::json::array();
    run_reference_sweep(options, [&](const SweepRow& r) {
      const bool ok = r.ok();
      failures += ok ? 0 : 1;
      if (!r.error.empty()) {
        fmt::print("{:<40} {:<9} ERROR {}\n", r.op, r.dtype, r.error);
      } else {
        fmt::print("{:<40} {:<9} {:>9} {:>11.3g} {:>11.3g} {:>8}  {}{}\n", r.op, r.dtype, r.stats.max_ulp,
                   r.stats.max_abs, r.stats.max_rel, psnr_text(r.stats.psnr_db), r.shapes, ok ? "" : r.max_ulp > 0 ? "   <-- BEYOND ITS ULPS" : "   <-- NOT EXACT");
      }
      rows.push_back({{"op", r.op}, {"dtype", r.dtype}, {"inputs", r.shapes}, {"max_ulp", r.stats.max_ulp},
                      {"max_abs", r.stats.max_abs}, {"max_rel", r.stats.max_rel}, {"exact", r.stats.exact},
                      {"seconds", r.seconds}, {"error", r.error}});
    });
    fmt::print("\n{} rows, {} not equal to the float64 result rounded once\n", rows.size(), failures);
    const AllocatorStats a = cpu_allocator().stats();
    const ProcessMemory after = read_process_memory();
    const double mib = 1 << 20;
    fmt::print("memory: allocator allocated peak {:.2f} MiB, reserved peak {:.2f} MiB ({} allocations, {} cache hits, "
               "{} misses)\n", a.allocated_peak_bytes / mib, a.reserved_peak_bytes / mib, a.allocations, a.cache_hits,
               a.cache_misses);
    fmt::print("        process rss before {:.1f} MiB (anon {:.1f}, file {:.1f}), peak {:.1f} MiB{}; outside the "
               "allocator {:.1f} MiB\n", before.rss_bytes / mib, before.rss_anon_bytes / mib, before.rss_file_bytes / mib,
               after.rss_peak_bytes / mib, peak_reset ? " (reset before the sweep)" : " (since process start: reset refused)",
               (static_cast<double>(after.rss_peak_bytes) - a.reserved_peak_bytes - before.rss_bytes) / mib);
    if (!json_path.empty()) {
      write_file_atomically(json_path, rows.dump(2) + "\n");
    }
    set_exit_code(failures == 0 ? 0 : 1);
  });
}

}  // namespace fourfold::cli
