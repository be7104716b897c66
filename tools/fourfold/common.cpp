#include "commands.h"
#include "fourfold/parallel.h"

namespace fourfold::cli {
namespace {
int g_exit_code = 0;
}

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

void add_threads_option(CLI::App& command, int& threads) {
  command.add_option("--threads", threads, "threads for parallel_for (default: FOURFOLD_THREADS or all CPUs)")
      ->check(CLI::Range(1, 1024));
}

void apply_threads(int threads) {
  if (threads > 0) set_num_threads(threads);
}

}  // namespace fourfold::cli
