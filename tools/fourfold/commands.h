// Each command registers its options and its callback; main.cpp only parses.
#pragma once

#include <string>

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

// Every option and positional argument of `app` and its subcommands refuses an empty value ("--prompt ''"),
// naming itself: an empty path or text never silently means "none given".
void refuse_empty_values(CLI::App& app);

// What the command is working on ("preset qwen3-30b-a3b", "latents l.npy"): main names it when the memory runs
// out, so the message says which input asked for too much.
void set_current_input(std::string what);
const std::string& current_input();

// --threads N (and FOURFOLD_THREADS): applied before the command runs.
void add_threads_option(CLI::App& command, int& threads);
void apply_threads(int threads);

}  // namespace fourfold::cli
