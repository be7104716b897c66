// fourfold run: prefill a prompt and decode, on a model folder or a preset built in memory, and report
// tokens/s, the fraction of the decode bandwidth floor, the tiers and ISA used, memory at three levels and the
// generated tokens. The workload is check/run_workload.h's; this file parses the options and prints.
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check/run_workload.h"
#include "commands.h"
#include "core/file_io.h"
#include "fourfold/parallel.h"
#include "fourfold/policy.h"
#include "model/formats/npy.h"

namespace fourfold::cli {
namespace {

struct RunOptions {
  std::string model_dir, preset;
  std::string prompt_text, prompt_file, prompt_ids_text, logits_path;
  bool ignore_eos = false, allow_past_max_position = false, profile = false;
  std::string weights = "copy";
  int64_t prompt_tokens = 32, gen = 16;
  int64_t layers = 0;
  int threads = 0;
  std::vector<std::string> force;
  std::string dtype = "auto", kv_dtype = "auto";
  std::string json_path;
  double temperature = 0.0, top_p = 1.0;
  int64_t top_k = 0;
  uint64_t seed = 0;
  int64_t step_probe_mib = 128;
};

std::string bytes(uint64_t n) {
  if (n >= (1ull << 30)) return fmt::format("{:.2f} GiB", n / double(1ull << 30));
  if (n >= (1ull << 20)) return fmt::format("{:.1f} MiB", n / double(1ull << 20));
  if (n >= (1ull << 10)) return fmt::format("{:.1f} KiB", n / double(1ull << 10));
  return fmt::format("{} B", n);
}

RunRequest request_of(const RunOptions& o, bool sampling_set) {
  RunRequest r;
  r.model_dir = o.model_dir;
  r.preset = o.preset;
  r.layers = o.layers;
  r.residency = o.weights == "map"        ? model::WeightResidency::map
                : o.weights == "populate" ? model::WeightResidency::populate
                                          : model::WeightResidency::copy;
  r.prompt = {o.prompt_text, o.prompt_file, o.prompt_ids_text, o.prompt_tokens, o.seed};
  r.gen = o.gen;
  r.ignore_eos = o.ignore_eos;
  r.allow_past_max_position = o.allow_past_max_position;
  r.keep_logits = !o.logits_path.empty();
  r.profile = o.profile;
  r.dtype = o.dtype;
  r.kv_dtype = o.kv_dtype;
  r.sampling = {o.temperature, o.top_k, o.top_p, o.seed};
  r.sampling_set = sampling_set;
  std::string policy_text;
  for (const std::string& f : o.force) policy_text += (policy_text.empty() ? "" : ",") + f;
  r.policy = policy_text.empty() ? current_policy() : Policy::parse(policy_text);
  r.step_probe_mib = o.step_probe_mib;
  return r;
}

void print_setup(const RunSetup& s, int threads) {
  if (s.from_files)
    fmt::print("load: {} in {:.2f} s ({}, {} threads)\n", bytes(s.loaded_bytes), s.load_seconds,
               s.residency == model::WeightResidency::copy       ? "read into anonymous memory on 2 MiB pages"
               : s.residency == model::WeightResidency::populate ? "mapped, every page faulted in at load by all threads"
                                                                 : "mapped, pages faulted in on first use",
               threads);
  for (const std::string& line : s.config_lines) fmt::print("config: {}\n", line);
  fmt::print("prompt: {}; sampling: {}; stop: {}\n", s.prompt_source, s.sampling_said, s.stop_said);
  if (s.past_max)
    fmt::print("warning: {} positions run past max_position_embeddings {} (--allow-past-max-position)\n",
               s.positions, s.max_position);
  if (s.streams_text) fmt::print("text: ");
}

void print_outcome(const RunOutcome& r) {
  const model::GenerationWithLogits& g = r.generation;
  const int64_t prompt_tokens = static_cast<int64_t>(r.prompt.ids.size());
  fmt::print("model: {}\n", r.description);
  fmt::print("weights {}, activations {} ({}), kv cache {} ({}), threads {}, policy {}\n", r.weights_said,
             dtype_name(r.activation), r.activation_from, dtype_name(r.kv_cache), r.kv_cache_from, r.threads,
             r.policy_said);
  fmt::print("prefill: {} tokens in {:.3f} s = {:.1f} tokens/s{}\n", prompt_tokens, g.prefill_seconds,
             r.prefill_tokens_per_s, r.kept_logits ? " (lm_head over every prompt position, for --logits)" : "");
  fmt::print("prefill compute: {:.2f} GFLOP = {:.1f} GFLOP/s, {:.1f}% of the {} peak ({:.0f} GFLOP/s: {} of this run){}\n",
             r.prefill_flops * 1e-9, r.prefill_gflop_per_s, 100.0 * r.prefill_gflop_per_s / r.peak.gflops,
             r.activation == DType::bf16 ? "bf16 dot-product" : "f32 FMA", r.peak.gflops, r.peak.source,
             r.peak.widened ? fmt::format("; {:.1f}% of the FMA probe, this level's own peak (bf16 widened to f32 FMAs)",
                                          100.0 * r.prefill_gflop_per_s / r.probe.fma_gflops.median)
                            : "");
  fmt::print("decode: {} tokens in {:.3f} s = {:.2f} tokens/s (context {} -> {}){}\n", g.decoded_tokens,
             g.decode_seconds, r.decode_tokens_per_s, prompt_tokens + 1, g.context,
             g.stopped ? fmt::format(", stopped at eos token {}", g.tokens.back()) : "");
  fmt::print("decode page faults: {} minor, {} major ({:.1f} per step)\n", g.decode_minor_faults,
             g.decode_major_faults,
             g.decoded_tokens > 0 ? double(g.decode_minor_faults + g.decode_major_faults) / g.decoded_tokens : 0.0);
  const model::DecodeFloor& floor = r.floor;
  fmt::print("bandwidth floor: {} active weights + {} KV{} per token (mean context {:.0f}) over {:.1f} GB/s read = "
             "{:.3f} ms/token; decode reached {:.1f}% of the floor (read probe after the run)\n",
             bytes(floor.weight_bytes), bytes(floor.kv_bytes),
             floor.state_bytes > 0 ? fmt::format(" + {} linear-attention state (read and written)", bytes(floor.state_bytes)) : "",
             r.mean_context, floor.read_gb_per_s, floor.seconds_per_token() * 1e3,
             100.0 * floor.fraction(r.decode_tokens_per_s));
  // Each step against the read probe sampled just before it: the figure that survives the host's swings.
  if (r.steps)
    fmt::print("bandwidth floor, step by step: the read probe before each step gave {:.1f} GB/s (median; {:.1f}-{:.1f}); "
               "each step reached {:.1f}% of its floor (median of {}; p10 {:.1f}%, p90 {:.1f}%)\n",
               r.steps->probe.median, r.steps->probe.min, r.steps->probe.max, 100.0 * r.steps->fraction.median,
               r.steps->fraction.count, 100.0 * r.steps->fraction.p10, 100.0 * r.steps->fraction.p90);
  if (r.profiled) fmt::print("{}", model::decode_profile_text(r.profile));
  std::string tier_text;
  for (const TierUse& t : r.tiers)
    tier_text += fmt::format("{}{} {}{} x{}", tier_text.empty() ? "" : ", ", t.op, t.tier,
                             t.variant.empty() ? "" : " (" + t.variant + ")", t.calls);
  fmt::print("tiers: {}\n", tier_text);
  fmt::print("isa: kernels {}; host {}\n", r.records.manifest.isa_variant, fmt::join(r.records.manifest.isa_flags, " "));
  const MemoryRecord& memory = r.memory;
  fmt::print("memory (process): rss {} now, peak {} during the run (anon {}, file {}){}\n", bytes(r.process_now.rss_bytes),
             bytes(memory.process_peak_bytes), bytes(memory.process_peak_anon_bytes),
             bytes(memory.process_peak_file_bytes), memory.peak_reset_supported ? "" : " [peak since process start]");
  fmt::print("memory (allocator): allocated peak {}, reserved peak {} (kv cache {} of it)\n",
             bytes(memory.allocated_peak_bytes), bytes(memory.reserved_peak_bytes), bytes(r.kv_cache_bytes));
  if (r.linear_conv_bytes + r.linear_recurrent_bytes > 0)
    fmt::print("memory (linear-attention states, in the allocator's): conv {}, recurrent {} (and one saved copy of each)\n",
               bytes(r.linear_conv_bytes), bytes(r.linear_recurrent_bytes));
  fmt::print("memory (mapped weights): {}{}\n", bytes(r.mapped_bytes),
             r.setup.from_files ? "" : " (a preset: its weights were built in the allocator)");
  if (r.file_copy_bytes > 0)
    fmt::print("memory (weights read into anonymous memory, --weights copy): {} (present before the workload)\n",
               bytes(r.file_copy_bytes));
  if (r.step_probe_bytes > 0)
    fmt::print("memory (the read probe between decode steps, --step-probe): {} (outside the allocator, present before "
               "the workload)\n", bytes(r.step_probe_bytes));
  fmt::print("memory (copied at load): {}{}\n", bytes(r.weights_copied_bytes),
             r.weights_copied.empty() ? " (every weight used in place)" : "");
  for (size_t i = 0; i < r.weights_copied.size() && i < 3; ++i) fmt::print("  {}\n", r.weights_copied[i]);
  if (r.weights_copied.size() > 3) fmt::print("  ... and {} more of the same kind\n", r.weights_copied.size() - 3);
  fmt::print("tokens: {}\n", fmt::join(g.tokens, " "));
}

void run(const RunOptions& o, bool sampling_set) {
  apply_threads(o.threads);
  const RunRequest request = request_of(o, sampling_set);
  // Refused now, not after the run.
  if (!o.json_path.empty()) check_output_path(o.json_path, "--json");
  if (!o.logits_path.empty()) check_output_path(o.logits_path, "--logits");
  const bool tty = isatty(STDERR_FILENO) != 0;
  bool text_pending = false;
  RunHooks hooks;
  hooks.status = [&](const std::string& m) {
    if (tty) fmt::print(stderr, "\r\033[K{}", m);
  };
  hooks.ready = [&](const RunSetup& s) {
    print_setup(s, num_threads());
    text_pending = s.streams_text;
  };
  hooks.text = [&](const std::string& piece) {
    if (tty) fmt::print(stderr, "\r\033[K");
    fmt::print("{}", piece);
    std::fflush(stdout);
  };
  set_current_input(o.model_dir.empty() ? "preset " + (o.preset.empty() ? std::string("tiny-moe") : o.preset)
                                        : "model " + o.model_dir);
  const RunOutcome outcome = run_workload(request, hooks);
  if (text_pending) fmt::print("\n");
  if (tty) fmt::print(stderr, "\r\033[K");
  print_outcome(outcome);
  if (!o.logits_path.empty()) {
    model::write_npy(o.logits_path, outcome.generation.logits);
    fmt::print("wrote {}: float32 logits [{}, {}], row i after token i of the prompt and then the generated tokens\n",
               o.logits_path, outcome.generation.logits.size(0), outcome.generation.logits.size(1));
  }
  if (o.json_path.empty()) return;
  write_text_file(o.json_path, run_record_json(outcome));
  fmt::print("wrote {}\n", o.json_path);
}

}  // namespace

void register_run(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "prefill a prompt and decode tokens on a model folder or a built-in preset");
  static RunOptions o;
  cmd->add_option("--model", o.model_dir, "Hugging Face model folder (config.json + safetensors)");
  cmd->add_option("--preset", o.preset, "built-in model built in memory: tiny-moe (default), tiny-qwen3, tiny-llama, "
                                        "small-moe, qwen3-30b-a3b, tiny-hybrid, qwen3.6-35b-a3b");
  cmd->add_option("--layers", o.layers, "preset only: number of layers")->check(CLI::Range(1, 1000));
  cmd->add_option("--prompt-tokens", o.prompt_tokens, "prompt length (synthetic token ids, when no prompt is given)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--prompt", o.prompt_text, "prompt text, encoded with the folder's tokenizer.json");
  cmd->add_option("--prompt-file", o.prompt_file, "a file whose text is the prompt");
  cmd->add_option("--prompt-ids", o.prompt_ids_text, "the prompt as token ids: 1,2,3");
  cmd->add_option("--weights", o.weights,
                  "how a folder's weights reach memory: copy (read at load by all threads into anonymous 2 MiB "
                  "pages: the fastest decode here), populate (mapped, every page faulted in at load: the fastest "
                  "load), map (mapped, faulted in on first use)")
      ->capture_default_str()
      ->check(CLI::IsMember({"copy", "populate", "map"}));
  cmd->add_flag("--profile", o.profile,
                "print the decode step's time per op and per layer kind, its share and GB/s against the read probe");
  cmd->add_option("--step-probe", o.step_probe_mib,
                  "MiB read by the bandwidth probe taken before each decode step, which the floor is judged against "
                  "step by step (0: none)")
      ->capture_default_str()->check(CLI::Range(int64_t(0), int64_t(1) << 16));
  cmd->add_flag("--ignore-eos", o.ignore_eos, "generate --gen tokens even past an eos token (benchmarks)");
  cmd->add_flag("--allow-past-max-position", o.allow_past_max_position,
                "run past the config's max_position_embeddings (said in the output and the record)");
  cmd->add_option("--logits", o.logits_path, "write the f32 logits of every position (prompt and generated) as .npy");
  cmd->add_option("--gen", o.gen, "tokens to generate")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--force", o.force, "policy: a tier for all ops (reference, generic, dedicated) or op=tier, repeatable");
  cmd->add_option("--dtype", o.dtype,
                  "activations: auto follows the checkpoint as transformers does (bf16 for a bf16 or FP8 checkpoint "
                  "and a preset, f32 for an f32 or f16 one); f32 keeps every value between ops in f32 (the precise mode), bf16 "
                  "rounds them to bf16 (the fast one); docs/dtypes.md's precision section says what each rounds")
      ->capture_default_str();
  cmd->add_option("--kv-dtype", o.kv_dtype, "KV cache: auto (the activations' dtype), bf16 or f32")
      ->capture_default_str();
  auto* t = cmd->add_option("--temperature", o.temperature, "0: greedy (default: generation_config.json's, else greedy)")
                ->check(finite_in(0, 1e6));
  auto* k = cmd->add_option("--top-k", o.top_k, "0: no top-k")->check(CLI::Range(int64_t(0), int64_t(1) << 31));
  auto* p = cmd->add_option("--top-p", o.top_p, "nucleus mass")->check(finite_in(0, 1));
  cmd->add_option("--seed", o.seed, "seed of the synthetic weights, the prompt and the sampler")->capture_default_str();
  cmd->add_option("--json", o.json_path, "also write the figures as JSON (a record set with a 'run' section)");
  add_threads_option(*cmd, o.threads);
  cmd->callback([t, k, p] { run(o, t->count() + k->count() + p->count() > 0); });
}

}  // namespace fourfold::cli
