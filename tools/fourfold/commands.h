// Each command registers its options and its callback; main.cpp only parses.
#pragma once

#include <CLI/CLI.hpp>

namespace fourfold::cli {

void register_info(CLI::App& app);
void register_sweep(CLI::App& app);
void register_compare(CLI::App& app);
void register_bench(CLI::App& app);
void register_check(CLI::App& app);
void register_run(CLI::App& app);
void register_make_model(CLI::App& app);
void register_quantize(CLI::App& app);
void register_vae(CLI::App& app);

// Set by a command's callback: 0 ok, 1 a check failed its threshold, 2 usage or input error.
void set_exit_code(int code);
int exit_code();

// A number option that must be finite and within [min, max]. CLI11's Range and NonNegativeNumber let NaN through
// (every comparison with NaN is false), and a NaN threshold turns a rule off.
CLI::Validator finite_in(double min, double max);

// --threads N (and FOURFOLD_THREADS): applied before the command runs.
void add_threads_option(CLI::App& command, int& threads);
void apply_threads(int threads);

}  // namespace fourfold::cli
