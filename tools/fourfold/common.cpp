#include <cmath>
#include <limits>
#include <system_error>

#include <fmt/format.h>

#include "commands.h"
#include "fourfold/errors.h"
#include "fourfold/parallel.h"

namespace fourfold::cli {
namespace {
int g_exit_code = 0;
}

void set_exit_code(int code) { g_exit_code = code; }

CLI::Validator finite_in(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || v < min || v > max)
          return fmt::format("expected a finite number in [{}, {}], found {}", min, max, text);
        return {};
      },
      fmt::format("FINITE in [{} - {}]", min, max));
}
int exit_code() { return g_exit_code; }

void add_threads_option(CLI::App& command, int& threads) {
  command.add_option("--threads", threads, "threads for parallel_for (default: FOURFOLD_THREADS or all CPUs)")
      ->check(CLI::Range(1, 1024));
}

void apply_threads(int threads) {
  if (threads <= 0) return;
  try {
    set_num_threads(threads);
    parallel_for(0, threads, 1, [](int64_t, int64_t) {});   // start them now, where the option can be named
  } catch (const std::system_error& e) {
    fail<ValueError>("fourfold", "--threads", "a thread count this system can start",
                     fmt::format("{} ({})", threads, e.what()));
  }
}

}  // namespace fourfold::cli
