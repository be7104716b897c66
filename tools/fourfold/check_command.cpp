// fourfold check: baseline and candidate policies, interleaved on the same inputs, all four records for each,
// written as JSON, Markdown and HTML, and compared (exit 1 when a correctness threshold fails).
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include <fmt/format.h>

#include "check/check_runner.h"
#include "check/compare.h"
#include "check/records.h"
#include "commands.h"
#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/llm/compute_dtypes.h"

namespace fourfold::cli {

void register_check(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "run baseline and candidate policies and write the four records for each");
  static CheckOptions options;
  static std::string out_dir = "fourfold-check";
  static int threads = 0;
  cmd->add_option("--suite", options.suites, "op suites (data/suites/*.json); default: all ten")->take_all();
  cmd->add_option("--baseline", options.baseline, "baseline policy, e.g. generic or softmax=reference")
      ->capture_default_str();
  cmd->add_option("--candidate", options.candidate, "candidate policy")->capture_default_str();
  cmd->add_option("--repeats", options.repeats, "A B sample pairs per row")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--rows-per-suite", options.rows_per_suite, "rows taken from each suite (0: all)")->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--reference-cap", options.reference_work_cap,
                  "skip rows whose float64 reference work exceeds this (0: no cap)")->capture_default_str()
      ->check(finite_in(0, 1e300));
  cmd->add_option("--seed", options.seed, "seed of every input")->capture_default_str();
  cmd->add_flag("--hot", [](int64_t) { options.rotate_bytes = 0; },
                "op time on one input set, kept in the caches between calls (default: calls rotate over sets of "
                ">= 128 MiB, so weights come from memory as in a decode step)");
  cmd->add_option("--out", out_dir, "directory for records.json, baseline.json, candidate.json, report.md, report.html")
      ->capture_default_str();
  EndToEndOptions& e2e = options.end_to_end;
  cmd->add_option("--model", e2e.model_dir, "end-to-end workloads on this Hugging Face model folder");
  cmd->add_option("--preset", e2e.preset, "end-to-end workloads on this preset built in memory")->capture_default_str();
  cmd->add_option("--dtype", e2e.activation,
                  "end-to-end activations: auto follows the model as transformers does (bf16 for a bf16 or FP8 "
                  "checkpoint and a preset, f32 for an f32 or f16 one), or bf16 or f32; the logits are also judged "
                  "in the f32 mode where this one is not f32 throughout")
      ->capture_default_str();
  cmd->add_option("--kv-dtype", e2e.kv_cache, "end-to-end KV cache: auto (the activations' dtype), bf16 or f32")
      ->capture_default_str();
  cmd->add_option("--e2e-contexts", e2e.decode_contexts, "contexts of the decode throughput figures")
      ->delimiter(',')->capture_default_str()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--e2e-prefill", e2e.prefill_tokens, "prompt length of the prefill figure")->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--e2e-repeats", e2e.repeats, "A B pairs per throughput figure")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--no-end-to-end", [&e2e](int64_t) { e2e.enabled = false; }, "skip the decoder workloads");
  VaeWorkloadOptions& vae = options.vae;
  cmd->add_option("--vae-model", vae.model_dir, "the VAE workload on this diffusers AutoencoderKLWan folder");
  cmd->add_option("--vae-preset", vae.preset, "the VAE workload on this preset built in memory")->capture_default_str();
  cmd->add_option("--vae-repeats", vae.repeats, "A B pairs of the VAE decode figure")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--no-vae", [&vae](int64_t) { vae.enabled = false; }, "skip the VAE workload");
  add_threads_option(*cmd, threads);
  cmd->callback([] {
    apply_threads(threads);
    model::check_dtype_options(options.end_to_end.activation, options.end_to_end.kv_cache, "check");
    // The set is written into a fresh folder beside --out and swapped in whole, so that a reader never sees
    // files of two runs mixed, and a killed run leaves the previous set (or none) under the name. Made first:
    // an --out that cannot be written is refused before the minutes of the check.
    OutputFolder out(out_dir, {"records.json", "baseline.json", "candidate.json", "report.md", "report.html"}, "--out");
    const bool tty = isatty(fileno(stderr));
    const CheckResult result = run_check(options, [tty](const std::string& m) {
      if (tty) std::fprintf(stderr, "\r\033[K%s", m.c_str());
    });
    if (tty) std::fprintf(stderr, "\r\033[K");
    write_check_result(out.staging() + "/records.json", result);
    write_record_set(out.staging() + "/baseline.json", result.baseline);
    write_record_set(out.staging() + "/candidate.json", result.candidate);
    const Comparison c = compare_records(result.baseline, result.candidate);
    fmt::print("{}", render_text(c));
    write_text_file(out.staging() + "/report.md", render_markdown(c));
    write_text_file(out.staging() + "/report.html", render_html(c));
    out.commit();
    fmt::print("\nwrote {0}/records.json, {0}/baseline.json, {0}/candidate.json, {0}/report.md, {0}/report.html\n", out_dir);
    set_exit_code(c.correctness_failed() ? 1 : 0);
  });
}

}  // namespace fourfold::cli
