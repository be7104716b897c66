#include "check/run_workload.h"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check/manifest.h"
#include "check/memory_workload.h"
#include "check/step_read_probe.h"
#include "core/fnv1a.h"
#include "fourfold/errors.h"
#include "fourfold/parallel.h"
#include "model/llm/compute_dtypes.h"
#include "model/llm/model_source.h"

namespace fourfold {
namespace {

std::vector<TierUse> tiers_used() {
  std::vector<TierUse> out;
  for (const DispatchCount& d : dispatch_counts()) {
    OpDispatch o{d.op, d.calls[0], d.calls[1], d.calls[2], d.last_variant};
    out.push_back({d.op, dispatch_tier(o), d.last_variant, d.calls[0] + d.calls[1] + d.calls[2]});
  }
  return out;
}

std::optional<StepFloor> step_floor(const model::Decoder& decoder, int64_t prompt_tokens,
                                    const std::vector<double>& step_seconds, const std::optional<StepReadProbe>& probe) {
  if (!probe || step_seconds.empty() || probe->samples().size() != step_seconds.size()) return std::nullopt;
  std::vector<double> fractions;
  for (size_t i = 0; i < step_seconds.size(); ++i) {
    const double context = static_cast<double>(prompt_tokens) + static_cast<double>(i) + 1.0;
    fractions.push_back(model::decode_floor(decoder, context, probe->samples()[i]).seconds_per_token() / step_seconds[i]);
  }
  return StepFloor{summarize(probe->samples()), summarize(fractions), probe->samples(), probe->bytes()};
}

// The first layer's first projection names the weights' dtype; a quantized checkpoint's routed experts may differ.
std::string weights_said(const model::ModelWeights& w) {
  std::string said(dtype_name(w.layers.empty()          ? w.embed_tokens.dtype()
                              : w.layers[0].linear ? w.layers[0].linear->qkv.weight.dtype()   // a hybrid's first layer
                                                   : w.layers[0].attention.q.weight.dtype()));
  for (const model::LayerWeights& l : w.layers)
    if (l.moe && l.moe->experts.gate.dtype() != DType::bf16 && std::string(dtype_name(l.moe->experts.gate.dtype())) != said) {
      const DType e = l.moe->experts.gate.dtype();
      const char* format = !is_fp4(e) ? "" : l.moe->experts.gate_scale->dtype() == DType::f8_e8m0fnu ? " (MXFP4)" : " (NVFP4)";
      return said + fmt::format(", routed experts {}{}", dtype_name(e), format);
    }
  return said;
}

// Stop tokens: generation_config.json's eos ids, else config.json's.
std::vector<int64_t> stop_tokens(const model::ModelSource& source, bool ignore_eos, std::string& said) {
  if (ignore_eos) {
    said = "none (--ignore-eos)";
    return {};
  }
  const bool from_generation = source.generation && !source.generation->eos_token_ids.empty();
  std::vector<int64_t> stops = from_generation ? source.generation->eos_token_ids : source.config.eos_token_ids;
  said = stops.empty() ? "none (the config names no eos token)"
                       : fmt::format("eos {} from {}", fmt::join(stops, ", "),
                                     from_generation ? "generation_config.json" : "config.json");
  return stops;
}

// What else changes the work: two runs that differ here did different work and must not compare as equal. Where
// the weights live changes the memory record's lines, not the work: said in the record, not the workload.
Workload run_workload_identity(const RunRequest& r, const model::ModelSource& source, const RunOutcome& out) {
  Workload workload;
  workload.kind = source.from_files ? WorkloadKind::model : WorkloadKind::preset;
  workload.name = source.name;
  workload.config_hash = source.config_hash;
  workload.preset = source.from_files ? "" : source.name;
  workload.seed = r.prompt.seed;
  workload.context_lengths = {static_cast<int64_t>(out.prompt.ids.size())};
  workload.repeats = 1;
  workload.parameters = {fmt::format("gen={}", r.gen),
                         fmt::format("prompt=fnv1a64:{:016x}", fnv1a64_words(out.prompt.ids)),
                         "sampling=" + out.setup.sampling_said,
                         "stop=" + out.setup.stop_said,
                         fmt::format("activation={}", dtype_name(out.activation)),
                         fmt::format("kv_cache={}", dtype_name(out.kv_cache)),
                         fmt::format("logits={}", r.keep_logits ? "all positions" : "last"),
                         fmt::format("past_max_position={}", out.setup.past_max)};
  return workload;
}

}  // namespace

RunOutcome run_workload(const RunRequest& r, const RunHooks& hooks) {
  const auto status = [&](const std::string& m) {
    if (hooks.status) hooks.status(m);
  };
  model::check_dtype_options(r.dtype, r.kv_dtype, "run");
  if (!r.model_dir.empty() && !r.preset.empty()) fail<ValueError>("run", "--model", "either --model or --preset", "both");
  if (!r.model_dir.empty() && r.layers > 0)
    fail<ValueError>("run", "--layers", "a preset (a folder has the layers its config.json says)", "--model too");
  const std::string residency = std::string(model::residency_name(r.residency));
  status(r.model_dir.empty() ? "building the preset's weights..."
                             : fmt::format("loading {} (--weights {})...", r.model_dir, residency));
  int last_percent = -1;
  const model::FolderProgress load_progress = [&](uint64_t done, uint64_t total) {
    const int percent = total > 0 ? static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)) : 0;
    if (percent == last_percent) return;
    last_percent = percent;
    status(fmt::format("loading {} (--weights {}): {:.1f} of {:.1f} MiB ({}%)", r.model_dir, residency,
                       done / double(1 << 20), total / double(1 << 20), percent));
  };
  const std::optional<int64_t> layers = r.layers > 0 ? std::optional<int64_t>(r.layers) : std::nullopt;
  model::ModelSource source = model::open_model(r.model_dir, r.preset, r.prompt.seed, layers, r.residency, load_progress);

  RunOutcome out;
  RunSetup& setup = out.setup;
  setup.from_files = source.from_files;
  setup.loaded_bytes = source.mapped_bytes + source.file_copy_bytes;
  setup.load_seconds = source.load_seconds;
  setup.residency = r.residency;
  out.description = source.description();
  const model::ModelConfig& config = source.config;
  std::optional<model::Tokenizer> tokenizer;
  const std::filesystem::path tokenizer_path = std::filesystem::path(r.model_dir) / "tokenizer.json";
  if (!r.model_dir.empty() && std::filesystem::exists(tokenizer_path))
    tokenizer = model::Tokenizer::from_file(tokenizer_path);
  out.prompt = make_prompt(r.prompt, tokenizer, r.model_dir, config.vocab_size, config.max_position_embeddings);
  const int64_t prompt_tokens = static_cast<int64_t>(out.prompt.ids.size());
  // A model is only defined up to its trained length: rope and attention past it give numbers, not answers.
  setup.positions = prompt_tokens + r.gen;
  setup.max_position = config.max_position_embeddings;
  setup.past_max = setup.positions > setup.max_position;
  if (setup.past_max && !r.allow_past_max_position)
    fail<ValueError>("run", "--gen / the prompt",
                     fmt::format("a prompt plus --gen within max_position_embeddings {} (or --allow-past-max-position)",
                                 setup.max_position),
                     fmt::format("{} + {} = {} positions", prompt_tokens, r.gen, setup.positions));
  const model::ComputeDtypes dtypes = model::resolve_compute_dtypes(r.dtype, r.kv_dtype, config, "run");
  out.activation = dtypes.activation;
  out.kv_cache = dtypes.kv_cache;
  out.activation_from = dtypes.activation_from;
  out.kv_cache_from = dtypes.kv_cache_from;
  model::DecoderOptions dopt;
  dopt.activation = out.activation;
  dopt.kv_cache = out.kv_cache;
  dopt.max_context = setup.positions;
  model::Decoder decoder = model::build_decoder(config, std::move(source.weights), dopt, source.name);
  model::Sampler sampler(choose_sampling(r.sampling, r.sampling_set, source.generation, setup.sampling_said));
  model::GenerateOptions gen_options;
  gen_options.stop_tokens = stop_tokens(source, r.ignore_eos, setup.stop_said);
  gen_options.keep_logits = r.keep_logits;
  gen_options.profile = r.profile;
  std::optional<model::StreamingDecoder> text_out;
  if (tokenizer && hooks.text) {
    text_out.emplace(*tokenizer);
    gen_options.on_token = [&](int64_t token) {
      // A model's vocab_size often pads past the tokenizer's (Qwen: 151936 rows, 151665 tokens); such an id
      // has no text, so it is shown as its number.
      const std::string piece = token < tokenizer->vocab_size() ? text_out->push(token)
                                                                : text_out->finish() + fmt::format("<id {}>", token);
      if (!piece.empty()) hooks.text(piece);
    };
  }
  setup.streams_text = text_out.has_value();
  for (const std::string& d : config.defaults_taken)
    setup.config_lines.push_back(d + " (absent from config.json: transformers' default)");
  for (const std::string& n : config.notes) setup.config_lines.push_back(n);
  setup.prompt_source = out.prompt.source;
  if (hooks.ready) hooks.ready(setup);

  // Made (and its buffer touched) before the workload: its memory is "present before", not the workload's.
  std::optional<StepReadProbe> step_probe;
  if (r.step_probe_mib > 0) step_probe.emplace(static_cast<size_t>(r.step_probe_mib) << 20);
  if (step_probe) gen_options.before_step = [&] { step_probe->sample(); };
  {
    ScopedPolicy scope(r.policy);
    reset_dispatch_counts();
    out.memory = measure_memory([&] {
      status(fmt::format("prefill of {} tokens...", prompt_tokens));
      out.generation = model::generate(decoder, out.prompt.ids, r.gen, sampler, gen_options, [&](int64_t done, int64_t total) {
        status(fmt::format("decode {}/{} (context {})", done, total, decoder.position()));
      });
    });
    if (text_out) hooks.text(text_out->finish());
    out.tiers = tiers_used();
    out.records.manifest = collect_manifest(run_workload_identity(r, source, out),
                                            {std::string(dtype_name(out.activation)), std::string(dtype_name(out.kv_cache))});
  }
  out.process_now = read_process_memory();   // before the probe's buffer joins the resident set
  status("probing the read bandwidth for the floor...");
  out.probe = measure_roofline(r.quick_probe ? ProbeBudget::quick() : ProbeBudget{});
  status("");

  const model::GenerationWithLogits& g = out.generation;
  out.kept_logits = r.keep_logits;
  out.profiled = r.profile;
  out.prefill_tokens_per_s = g.prefill_tokens_per_s(prompt_tokens);
  out.decode_tokens_per_s = g.decode_tokens_per_s();
  out.mean_context = prompt_tokens + 0.5 * static_cast<double>(g.decoded_tokens);
  out.floor = model::decode_floor(decoder, out.mean_context, out.probe.read_gbs.median);
  out.steps = step_floor(decoder, prompt_tokens, g.step_seconds, step_probe);
  out.profile = model::decode_profile(g.profile, g.decoded_tokens, g.decode_seconds,
                                      out.steps ? out.steps->probe.median : out.probe.read_gbs.median);
  out.prefill_flops = model::prefill_flops(config, prompt_tokens, 0, r.keep_logits);
  out.peak = prefill_compute_peak(out.probe, out.activation == DType::bf16);
  out.prefill_gflop_per_s = out.prefill_flops * 1e-9 / g.prefill_seconds;
  out.weights_said = weights_said(decoder.weights());
  out.policy_said = r.policy.to_string().empty() ? "none: the fastest tier per op" : r.policy.to_string();
  out.threads = num_threads();
  out.kv_cache_bytes = decoder.cache().nbytes();
  out.linear_conv_bytes = decoder.linear_states().conv_bytes();
  out.linear_recurrent_bytes = decoder.linear_states().recurrent_bytes();
  out.mapped_bytes = source.mapped_bytes;
  out.file_copy_bytes = source.file_copy_bytes;
  out.step_probe_bytes = step_probe ? step_probe->bytes() : 0;
  out.weights_copied_bytes = decoder.weights().copied_bytes;
  out.weights_copied = decoder.weights().copies;

  out.records.manifest.machine_before.read_bandwidth_gb_per_s = out.probe.read_gbs.median;
  const double prefill = out.prefill_tokens_per_s, decode = out.decode_tokens_per_s;
  out.records.throughput = ThroughputRecord{0,
                                            {{"prefill", prompt_tokens, 0, prefill, prefill, prefill, {prefill}},
                                             {"decode", prompt_tokens, g.decoded_tokens, decode, decode, decode, {decode}}}};
  out.records.memory = out.memory;
  out.records.memory->mapped_weights_bytes = source.mapped_bytes;
  return out;
}

}  // namespace fourfold
