// fourfold run: prefill a prompt and decode, on a model folder or a preset built in memory, and report
// tokens/s, the fraction of the decode bandwidth floor, the tiers and ISA used, memory at three levels and the
// generated tokens.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "check/memory_workload.h"
#include "core/file_io.h"
#include "core/fnv1a.h"
#include "check/records.h"
#include "check/roofline_probes.h"
#include "check/statistics.h"
#include "check/step_read_probe.h"
#include "commands.h"
#include "fourfold/allocator.h"
#include "fourfold/errors.h"
#include "fourfold/memory_probe.h"
#include "fourfold/parallel.h"
#include "fourfold/policy.h"
#include "model/llm/compute_dtypes.h"
#include "model/llm/bandwidth_floor.h"
#include "model/llm/decode_profile.h"
#include "model/llm/generation.h"
#include "model/llm/model_source.h"
#include "model/formats/npy.h"
#include "model/tokenizer/tokenizer.h"
#include "ops/kernel_isa.h"

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
  bool quick_probe = true;
  int64_t step_probe_mib = 128;   // the read probe between decode steps (0: none)
};

std::string bytes(uint64_t n) {
  if (n >= (1ull << 30)) return fmt::format("{:.2f} GiB", n / double(1ull << 30));
  if (n >= (1ull << 20)) return fmt::format("{:.1f} MiB", n / double(1ull << 20));
  if (n >= (1ull << 10)) return fmt::format("{:.1f} KiB", n / double(1ull << 10));
  return fmt::format("{} B", n);
}

struct TierLine {
  std::string op, tier, variant;
  uint64_t calls = 0;
};

std::vector<TierLine> tiers_used() {
  std::vector<TierLine> out;
  for (const DispatchCount& d : dispatch_counts()) {
    OpDispatch o{d.op, d.calls[0], d.calls[1], d.calls[2], d.last_variant};
    out.push_back({d.op, dispatch_tier(o), d.last_variant, d.calls[0] + d.calls[1] + d.calls[2]});
  }
  return out;
}

// The prompt's token ids and where they came from: --prompt / --prompt-file through the folder's tokenizer.json,
// --prompt-ids as given, else the synthetic prompt of --prompt-tokens ids.
struct Prompt {
  std::vector<int64_t> ids;
  std::string source;
};

std::vector<int64_t> parse_ids(const std::string& text, int64_t vocab) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < part.size() && part[used] == ' ') ++used;
    if (used != part.size() || part.empty() || v < 0 || v >= vocab)
      fail<ValueError>("run", "--prompt-ids", fmt::format("comma-separated token ids in [0, {})", vocab), part);
    ids.push_back(v);
  }
  if (ids.empty()) fail<ValueError>("run", "--prompt-ids", "at least one token id", "none");
  return ids;
}

// A prompt file is refused by its size before any of it is read or tokenized: a file far past the context would
// otherwise cost its whole tokenization (seconds and gigabytes for tens of MB) before its length is known. A
// token of these byte-level BPEs covers at most a few dozen bytes of real text (the longest are runs of spaces or
// punctuation), so 64 bytes per position of the context is past any prompt that fits it; 1 MiB keeps small
// contexts from refusing an ordinary file.
uint64_t prompt_file_cap(int64_t context) {
  const uint64_t positions = static_cast<uint64_t>(std::clamp<int64_t>(context, 0, int64_t(1) << 48));
  return std::max<uint64_t>(uint64_t(1) << 20, positions * 64);
}

std::string read_prompt_file(const std::string& path, int64_t context) {
  const uint64_t cap = prompt_file_cap(context);
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > cap)
    fail<ValueError>("run", "--prompt-file " + path,
                     fmt::format("at most {} bytes (64 per position of the context {}, at least 1 MiB)", cap, context),
                     fmt::format("{} bytes", size));
  return read_regular_file(path, cap);
}

Prompt make_prompt(const RunOptions& o, const std::optional<model::Tokenizer>& tokenizer, int64_t vocab,
                   int64_t context) {
  const int given = !o.prompt_text.empty() + !o.prompt_file.empty() + !o.prompt_ids_text.empty();
  if (given > 1) fail<ValueError>("run", "--prompt", "one of --prompt, --prompt-file, --prompt-ids", "several");
  if (!o.prompt_ids_text.empty()) return {parse_ids(o.prompt_ids_text, vocab), "--prompt-ids"};
  if (given == 0)
    return {model::synthetic_prompt(o.prompt_tokens, vocab, o.seed),
            fmt::format("synthetic ({} ids from seed {})", o.prompt_tokens, o.seed)};
  const char* option = o.prompt_text.empty() ? "--prompt-file" : "--prompt";
  if (!tokenizer)
    fail<ValueError>("run", option, "a model folder with a tokenizer.json (--model DIR)",
                     o.model_dir.empty() ? "a preset, which has no tokenizer" : "none in " + o.model_dir);
  const std::string from = o.prompt_text.empty() ? "--prompt-file " + o.prompt_file : "--prompt";
  const std::string text = o.prompt_text.empty() ? read_prompt_file(o.prompt_file, context) : o.prompt_text;
  // `from` names the option and the file in the tokenizer's refusals (invalid UTF-8 and its byte offset).
  std::vector<int64_t> ids = tokenizer->encode(text, /*add_special_tokens=*/true, from);
  if (ids.empty()) fail<ValueError>("run", from, "text that encodes to at least one token", "none");
  for (int64_t id : ids)
    if (id >= vocab)
      fail<ValueError>("run", from, fmt::format("token ids below the model's vocab_size {}", vocab),
                       fmt::format("id {} from tokenizer.json", id));
  return {ids, fmt::format("{} ({} tokens)", option, ids.size())};
}

// Sampling: the command line's when it sets any of it, else generation_config.json's (transformers' rules: no
// do_sample means greedy; with it, temperature 1, top_k 50, top_p 1 unless the file says otherwise), else greedy.
model::SamplerOptions sampling(const RunOptions& o, bool cli_set, const std::optional<model::GenerationConfig>& g,
                               std::string& said) {
  model::SamplerOptions s{o.temperature, o.top_k, o.top_p, o.seed};
  if (cli_set || !g) {
    said = cli_set ? "from the command line" : "greedy (no generation_config.json)";
    return s;
  }
  if (!g->do_sample.value_or(false)) {
    said = "greedy (generation_config.json: do_sample false or absent)";
    return s;
  }
  s.temperature = g->temperature.value_or(1.0);
  s.top_k = g->top_k.value_or(50);
  s.top_p = g->top_p.value_or(1.0);
  said = fmt::format("from generation_config.json: temperature {}, top_k {}, top_p {}", s.temperature, s.top_k,
                     s.top_p);
  if (!g->not_applied.empty()) said += fmt::format(" (not applied: {})", fmt::join(g->not_applied, ", "));
  return s;
}

// The decode step by step: step i's floor at the read probe sampled just before it, over its own time.
struct StepFloor {
  Summary probe, fraction;
};

std::optional<StepFloor> step_floor(const model::Decoder& decoder, int64_t prompt_tokens,
                                    const std::vector<double>& step_seconds, const std::optional<StepReadProbe>& probe) {
  if (!probe || step_seconds.empty() || probe->samples().size() != step_seconds.size()) return std::nullopt;
  std::vector<double> fractions;
  for (size_t i = 0; i < step_seconds.size(); ++i) {
    const double context = static_cast<double>(prompt_tokens) + static_cast<double>(i) + 1.0;
    fractions.push_back(model::decode_floor(decoder, context, probe->samples()[i]).seconds_per_token() / step_seconds[i]);
  }
  return StepFloor{summarize(probe->samples()), summarize(fractions)};
}

void run(const RunOptions& o, bool sampling_set) {
  apply_threads(o.threads);
  std::string policy_text;
  for (const std::string& f : o.force) policy_text += (policy_text.empty() ? "" : ",") + f;
  const Policy policy = policy_text.empty() ? current_policy() : Policy::parse(policy_text);
  model::check_dtype_options(o.dtype, o.kv_dtype, "run");
  if (!o.model_dir.empty() && !o.preset.empty()) fail<ValueError>("run", "--model", "either --model or --preset", "both");
  if (!o.model_dir.empty() && o.layers > 0)
    fail<ValueError>("run", "--layers", "a preset (a folder has the layers its config.json says)", "--model too");
  // Refused now, not after the run.
  if (!o.json_path.empty()) check_output_path(o.json_path, "--json");
  if (!o.logits_path.empty()) check_output_path(o.logits_path, "--logits");
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto say = [&](const std::string& m) {
    if (tty) fmt::print(stderr, "\r\033[K{}", m);
  };

  say(o.model_dir.empty() ? "building the preset's weights..."
                           : fmt::format("loading {} (--weights {})...", o.model_dir, o.weights));
  const std::optional<int64_t> layers = o.layers > 0 ? std::optional<int64_t>(o.layers) : std::nullopt;
  const model::WeightResidency residency = o.weights == "map"        ? model::WeightResidency::map
                                          : o.weights == "populate" ? model::WeightResidency::populate
                                                                    : model::WeightResidency::copy;
  int last_percent = -1;
  const model::FolderProgress load_progress = [&](uint64_t done, uint64_t total) {
    const int percent = total > 0 ? static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)) : 0;
    if (percent == last_percent) return;
    last_percent = percent;
    say(fmt::format("loading {} (--weights {}): {} of {} ({}%)", o.model_dir, o.weights, bytes(done), bytes(total), percent));
  };
  set_current_input(o.model_dir.empty() ? "preset " + (o.preset.empty() ? std::string("tiny-moe") : o.preset)
                                          : "model " + o.model_dir);
  model::ModelSource source = model::open_model(o.model_dir, o.preset, o.seed, layers, residency, load_progress);
  if (source.from_files)
    fmt::print("load: {} in {:.2f} s ({}, {} threads)\n", bytes(source.mapped_bytes + source.file_copy_bytes),
               source.load_seconds,
               residency == model::WeightResidency::copy       ? "read into anonymous memory on 2 MiB pages"
               : residency == model::WeightResidency::populate ? "mapped, every page faulted in at load by all threads"
                                                               : "mapped, pages faulted in on first use",
               num_threads());
  const std::string description = source.description();
  const model::ModelConfig config = source.config;
  std::optional<model::Tokenizer> tokenizer;
  const std::filesystem::path tokenizer_path = std::filesystem::path(o.model_dir) / "tokenizer.json";
  if (!o.model_dir.empty() && std::filesystem::exists(tokenizer_path))
    tokenizer = model::Tokenizer::from_file(tokenizer_path);
  const Prompt prompt = make_prompt(o, tokenizer, config.vocab_size, config.max_position_embeddings);
  const int64_t prompt_tokens = static_cast<int64_t>(prompt.ids.size());
  // A model is only defined up to its trained length: rope and attention past it give numbers, not answers.
  const bool past_max = prompt_tokens + o.gen > config.max_position_embeddings;
  if (past_max && !o.allow_past_max_position)
    fail<ValueError>("run", "--gen / the prompt",
                     fmt::format("a prompt plus --gen within max_position_embeddings {} (or --allow-past-max-position)",
                                 config.max_position_embeddings),
                     fmt::format("{} + {} = {} positions", prompt_tokens, o.gen, prompt_tokens + o.gen));
  const model::ComputeDtypes dtypes = model::resolve_compute_dtypes(o.dtype, o.kv_dtype, config, "run");
  const DType act = dtypes.activation, kv = dtypes.kv_cache;
  model::DecoderOptions dopt;
  dopt.activation = act;
  dopt.kv_cache = kv;
  dopt.max_context = prompt_tokens + o.gen;
  model::Decoder decoder = model::build_decoder(config, std::move(source.weights), dopt, source.name);
  std::string sampling_said;
  model::Sampler sampler(sampling(o, sampling_set, source.generation, sampling_said));
  // Stop tokens: generation_config.json's eos ids, else config.json's.
  model::GenerateOptions gen_options;
  std::string stop_said = "none (--ignore-eos)";
  if (!o.ignore_eos) {
    const bool from_generation = source.generation && !source.generation->eos_token_ids.empty();
    gen_options.stop_tokens = from_generation ? source.generation->eos_token_ids : config.eos_token_ids;
    stop_said = gen_options.stop_tokens.empty()
                    ? "none (the config names no eos token)"
                    : fmt::format("eos {} from {}", fmt::join(gen_options.stop_tokens, ", "),
                                  from_generation ? "generation_config.json" : "config.json");
  }
  gen_options.keep_logits = !o.logits_path.empty();
  gen_options.profile = o.profile;
  std::optional<model::StreamingDecoder> text_out;
  if (tokenizer) {
    text_out.emplace(*tokenizer);
    gen_options.on_token = [&](int64_t token) {
      // A model's vocab_size often pads past the tokenizer's (Qwen: 151936 rows, 151665 tokens); such an id
      // has no text, so it is shown as its number.
      const std::string piece = token < tokenizer->vocab_size() ? text_out->push(token)
                                                                : text_out->finish() + fmt::format("<id {}>", token);
      if (!piece.empty()) {
        if (tty) fmt::print(stderr, "\r\033[K");
        fmt::print("{}", piece);
        std::fflush(stdout);
      }
    };
  }
  for (const std::string& d : config.defaults_taken) fmt::print("config: {} (absent from config.json: transformers' default)\n", d);
  for (const std::string& n : config.notes) fmt::print("config: {}\n", n);
  fmt::print("prompt: {}; sampling: {}; stop: {}\n", prompt.source, sampling_said, stop_said);
  if (past_max)
    fmt::print("warning: {} positions run past max_position_embeddings {} (--allow-past-max-position)\n",
               prompt_tokens + o.gen, config.max_position_embeddings);
  if (tokenizer) fmt::print("text: ");

  // Made (and its buffer touched) before the workload: its memory is "present before", not the workload's.
  std::optional<StepReadProbe> step_probe;
  if (o.step_probe_mib > 0) step_probe.emplace(static_cast<size_t>(o.step_probe_mib) << 20);
  if (step_probe) gen_options.before_step = [&] { step_probe->sample(); };

  ScopedPolicy scope(policy);
  reset_dispatch_counts();
  model::GenerationWithLogits g;
  const MemoryRecord memory = measure_memory([&] {
    say(fmt::format("prefill of {} tokens...", prompt.ids.size()));
    g = model::generate(decoder, prompt.ids, o.gen, sampler, gen_options, [&](int64_t done, int64_t total) {
      say(fmt::format("decode {}/{} (context {})", done, total, decoder.position()));
    });
  });
  if (tokenizer) fmt::print("{}\n", text_out->finish());
  const std::vector<TierLine> tiers = tiers_used();
  const ProcessMemory now = read_process_memory();   // before the probe's buffer joins the resident set
  say("probing the read bandwidth for the floor...");
  const RooflineProbe probe = measure_roofline(o.quick_probe ? ProbeBudget::quick() : ProbeBudget{});
  say("");
  if (tty) fmt::print(stderr, "\r\033[K");

  const double prefill_tps = g.prefill_tokens_per_s(prompt_tokens), decode_tps = g.decode_tokens_per_s();
  const double mean_context = prompt_tokens + 0.5 * static_cast<double>(g.decoded_tokens);
  const model::DecodeFloor floor = model::decode_floor(decoder, mean_context, probe.read_gbs.median);
  const model::ModelWeights& w = decoder.weights();

  fmt::print("model: {}\n", description);
  // The first layer's first projection names the weights' dtype; a quantized checkpoint's routed experts may differ.
  std::string weights_text(dtype_name(w.layers.empty()          ? w.embed_tokens.dtype()
                                      : w.layers[0].linear ? w.layers[0].linear->qkv.weight.dtype()   // a hybrid's first layer
                                                           : w.layers[0].attention.q.weight.dtype()));
  for (const model::LayerWeights& l : w.layers)
    if (l.moe && l.moe->experts.gate.dtype() != DType::bf16 && std::string(dtype_name(l.moe->experts.gate.dtype())) != weights_text) {
      const DType e = l.moe->experts.gate.dtype();
      const char* format = !is_fp4(e) ? "" : l.moe->experts.gate_scale->dtype() == DType::f8_e8m0fnu ? " (MXFP4)" : " (NVFP4)";
      weights_text += fmt::format(", routed experts {}{}", dtype_name(e), format);
      break;
    }
  fmt::print("weights {}, activations {} ({}), kv cache {} ({}), threads {}, policy {}\n", weights_text,
             dtype_name(act), dtypes.activation_from, dtype_name(kv), dtypes.kv_cache_from, num_threads(),
             policy.to_string().empty() ? "none: the fastest tier per op" : policy.to_string());
  fmt::print("prefill: {} tokens in {:.3f} s = {:.1f} tokens/s{}\n", prompt_tokens, g.prefill_seconds, prefill_tps,
             gen_options.keep_logits ? " (lm_head over every prompt position, for --logits)" : "");
  const double flops = model::prefill_flops(config, prompt_tokens, 0, gen_options.keep_logits);
  const ComputePeak peak = prefill_compute_peak(probe, act == DType::bf16);
  const double prefill_gflops = flops * 1e-9 / g.prefill_seconds;
  fmt::print("prefill compute: {:.2f} GFLOP = {:.1f} GFLOP/s, {:.1f}% of the {} peak ({:.0f} GFLOP/s: {} of this run){}\n",
             flops * 1e-9, prefill_gflops, 100.0 * prefill_gflops / peak.gflops,
             act == DType::bf16 ? "bf16 dot-product" : "f32 FMA", peak.gflops, peak.source,
             peak.widened ? fmt::format("; {:.1f}% of the FMA probe, this level's own peak (bf16 widened to f32 FMAs)",
                                        100.0 * prefill_gflops / probe.fma_gflops.median)
                          : "");
  fmt::print("decode: {} tokens in {:.3f} s = {:.2f} tokens/s (context {} -> {}){}\n", g.decoded_tokens,
             g.decode_seconds, decode_tps, prompt_tokens + 1, g.context,
             g.stopped ? fmt::format(", stopped at eos token {}", g.tokens.back()) : "");
  fmt::print("decode page faults: {} minor, {} major ({:.1f} per step)\n", g.decode_minor_faults,
             g.decode_major_faults,
             g.decoded_tokens > 0 ? double(g.decode_minor_faults + g.decode_major_faults) / g.decoded_tokens : 0.0);
  fmt::print("bandwidth floor: {} active weights + {} KV{} per token (mean context {:.0f}) over {:.1f} GB/s read = "
             "{:.3f} ms/token; decode reached {:.1f}% of the floor (read probe after the run)\n",
             bytes(floor.weight_bytes), bytes(floor.kv_bytes),
             floor.state_bytes > 0 ? fmt::format(" + {} linear-attention state (read and written)", bytes(floor.state_bytes)) : "",
             mean_context, floor.read_gb_per_s,
             floor.seconds_per_token() * 1e3, 100.0 * floor.fraction(decode_tps));
  // Each step against the read probe sampled just before it: the figure that survives the host's swings.
  const std::optional<StepFloor> steps = step_floor(decoder, prompt_tokens, g.step_seconds, step_probe);
  if (steps)
    fmt::print("bandwidth floor, step by step: the read probe before each step gave {:.1f} GB/s (median; {:.1f}-{:.1f}); "
               "each step reached {:.1f}% of its floor (median of {}; p10 {:.1f}%, p90 {:.1f}%)\n",
               steps->probe.median, steps->probe.min, steps->probe.max, 100.0 * steps->fraction.median,
               steps->fraction.count, 100.0 * steps->fraction.p10, 100.0 * steps->fraction.p90);
  const model::DecodeProfile profile = model::decode_profile(g.profile, g.decoded_tokens, g.decode_seconds,
                                                             steps ? steps->probe.median : probe.read_gbs.median);
  if (o.profile) fmt::print("{}", model::decode_profile_text(profile));
  std::string tier_text;
  for (const TierLine& t : tiers)
    tier_text += fmt::format("{}{} {}{} x{}", tier_text.empty() ? "" : ", ", t.op, t.tier,
                             t.variant.empty() ? "" : " (" + t.variant + ")", t.calls);
  fmt::print("tiers: {}\n", tier_text);
  const Manifest manifest_now = collect_manifest({}, {});
  fmt::print("isa: kernels {}; host {}\n", manifest_now.isa_variant, fmt::join(manifest_now.isa_flags, " "));
  fmt::print("memory (process): rss {} now, peak {} during the run (anon {}, file {}){}\n", bytes(now.rss_bytes),
             bytes(memory.process_peak_bytes), bytes(memory.process_peak_anon_bytes),
             bytes(memory.process_peak_file_bytes), memory.peak_reset_supported ? "" : " [peak since process start]");
  fmt::print("memory (allocator): allocated peak {}, reserved peak {} (kv cache {} of it)\n",
             bytes(memory.allocated_peak_bytes), bytes(memory.reserved_peak_bytes), bytes(decoder.cache().nbytes()));
  if (decoder.linear_states().nbytes() > 0)
    fmt::print("memory (linear-attention states, in the allocator's): conv {}, recurrent {} (and one saved copy of each)\n",
               bytes(decoder.linear_states().conv_bytes()), bytes(decoder.linear_states().recurrent_bytes()));
  fmt::print("memory (mapped weights): {}{}\n", bytes(source.mapped_bytes),
             source.from_files ? "" : " (a preset: its weights were built in the allocator)");
  if (source.file_copy_bytes > 0)
    fmt::print("memory (weights read into anonymous memory, --weights copy): {} (present before the workload)\n",
               bytes(source.file_copy_bytes));
  if (step_probe)
    fmt::print("memory (the read probe between decode steps, --step-probe): {} (outside the allocator, present before "
               "the workload)\n", bytes(step_probe->bytes()));
  fmt::print("memory (copied at load): {}{}\n", bytes(w.copied_bytes),
             w.copies.empty() ? " (every weight used in place)" : "");
  for (size_t i = 0; i < w.copies.size() && i < 3; ++i) fmt::print("  {}\n", w.copies[i]);
  if (w.copies.size() > 3) fmt::print("  ... and {} more of the same kind\n", w.copies.size() - 3);
  fmt::print("tokens: {}\n", fmt::join(g.tokens, " "));
  if (!o.logits_path.empty()) {
    model::write_npy(o.logits_path, g.logits);
    fmt::print("wrote {}: float32 logits [{}, {}], row i after token i of the prompt and then the generated tokens\n",
               o.logits_path, g.logits.size(0), g.logits.size(1));
  }

  if (o.json_path.empty()) return;
  Workload workload;
  workload.kind = source.from_files ? WorkloadKind::model : WorkloadKind::preset;
  workload.name = source.name;
  workload.config_hash = source.config_hash;
  workload.preset = source.from_files ? "" : source.name;
  workload.seed = o.seed;
  workload.context_lengths = {prompt_tokens};
  workload.repeats = 1;
  // What else changes the work: two runs that differ here did different work and must not compare as equal.
  workload.parameters = {fmt::format("gen={}", o.gen),
                         fmt::format("prompt=fnv1a64:{:016x}", fnv1a64_words(prompt.ids)),
                         "sampling=" + sampling_said,
                         "stop=" + stop_said,
                         fmt::format("activation={}", dtype_name(act)),
                         fmt::format("kv_cache={}", dtype_name(kv)),
                         fmt::format("logits={}", gen_options.keep_logits ? "all positions" : "last"),
                         fmt::format("past_max_position={}", past_max)};
  // Where the weights live changes the memory record's lines, not the work: said in the record, not the workload.
  RecordSet records;
  {
    ScopedPolicy again(policy);
    records.manifest = collect_manifest(workload, {std::string(dtype_name(act)), std::string(dtype_name(kv))});
  }
  records.manifest.machine_before.read_bandwidth_gb_per_s = probe.read_gbs.median;
  records.throughput = ThroughputRecord{0,
                                        {{"prefill", prompt_tokens, 0, prefill_tps, prefill_tps, prefill_tps, {prefill_tps}},
                                         {"decode", prompt_tokens, g.decoded_tokens, decode_tps, decode_tps, decode_tps, {decode_tps}}}};
  records.memory = memory;
  records.memory->mapped_weights_bytes = source.mapped_bytes;
  nlohmann::json out = nlohmann::json::parse(to_json_text(records));
  out["run"] = {{"model", description},
                {"prompt_tokens", prompt_tokens},
                {"prompt_source", prompt.source},
                {"prompt_ids", prompt.ids},
                {"stopped_at_eos", g.stopped},
                {"generated_tokens", g.tokens},
                {"prefill_seconds", g.prefill_seconds},
                {"decode_seconds", g.decode_seconds},
                {"decoded_tokens", g.decoded_tokens},
                {"context_reached", g.context},
                {"prefill_compute", {{"flops", flops}, {"gflop_per_s", prefill_gflops},
                                     {"peak_gflop_per_s", peak.gflops}, {"fraction_of_peak", prefill_gflops / peak.gflops}}},
                {"bandwidth_floor", {{"active_weight_bytes_per_token", floor.weight_bytes},
                                     {"kv_bytes_per_token", floor.kv_bytes},
                                     {"mean_context", mean_context},
                                     {"read_gb_per_s", floor.read_gb_per_s},
                                     {"floor_seconds_per_token", floor.seconds_per_token()},
                                     {"fraction_reached", floor.fraction(decode_tps)}}},
                {"bandwidth_floor_by_step",
                 steps ? nlohmann::json{{"probe_bytes", step_probe->bytes()},
                                        {"read_gb_per_s", step_probe->samples()},
                                        {"step_seconds", g.step_seconds},
                                        {"fraction_median", steps->fraction.median},
                                        {"fraction_p10", steps->fraction.p10},
                                        {"fraction_p90", steps->fraction.p90}}
                       : nlohmann::json(nullptr)},
                {"weights_copied_at_load_bytes", w.copied_bytes},
                {"weights_residency", std::string(model::residency_name(source.residency))},
                {"weights_read_into_memory_bytes", source.file_copy_bytes},
                {"load_seconds", source.load_seconds},
                {"decode_minor_faults", g.decode_minor_faults},
                {"decode_major_faults", g.decode_major_faults},
                {"weights_copied_at_load", w.copies},
                {"kv_cache_bytes", decoder.cache().nbytes()},
                {"linear_state_bytes", decoder.linear_states().nbytes()},
                {"activation_dtype", std::string(dtype_name(act))},
                {"activation_dtype_from", dtypes.activation_from},
                {"kv_cache_dtype", std::string(dtype_name(kv))},
                {"kv_cache_dtype_from", dtypes.kv_cache_from}};
  if (o.profile) {
    nlohmann::json ops = nlohmann::json::array();
    for (const model::DecodeProfileLine& l : profile.ops)
      ops.push_back({{"scope", l.scope}, {"op", l.op}, {"tier", l.tier}, {"calls_per_step", l.calls_per_step},
                     {"us_per_step", l.us_per_step}, {"share_of_step", l.share}, {"gb_per_s", l.gb_per_s},
                     {"fraction_of_read_probe", l.of_probe}});
    out["run"]["decode_profile"] = {{"steps", profile.steps}, {"us_per_step", profile.us_per_step},
                                    {"outside_ops_us_per_step", profile.outside_ops_us},
                                    {"read_gb_per_s", profile.read_gb_per_s}, {"ops", ops}};
  }
  write_text_file(o.json_path, out.dump(1) + "\n");
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
