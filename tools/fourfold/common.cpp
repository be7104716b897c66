#include <cmath>
#include <limits>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "commands.h"
#include "fourfold/errors.h"
#include "fourfold/parallel.h"

namespace fourfold::cli {
namespace {
int g_exit_code = 0;
std::string g_current_input;
}

void set_current_input(std::string what) { g_current_input = std::move(what); }
const std::string& current_input() { return g_current_input; }

void refuse_empty_values(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& text) -> std::string { return text.empty() ? "expected a value, found an empty string" : ""; },
      "");   // no word in --help beside every option
  for (CLI::Option* option : app.get_options())
    if (option->get_type_size_min() > 0) option->check(non_empty);   // flags take no value
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_empty_values(*sub);
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
