// One decoder serves both sides (the weights are bound once; only the policy changes between samples). The
// decode figures fill the cache to each context once, untimed, then time `decode_tokens` steps from that
// context again and again (rewinding), A B interleaved: the fill is the expensive part on a slow tier and is
// not what the figure measures.
#include "check/end_to_end_workload.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "check/error_metrics.h"
#include "check/memory_workload.h"
#include "check/statistics.h"
#include "fourfold/errors.h"
#include "model/llm/compute_dtypes.h"
#include "model/llm/generation.h"
#include "model/llm/model_source.h"

namespace fourfold {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

ThroughputRow row_of(std::string phase, int64_t context, int64_t generated, std::vector<double> samples) {
  ThroughputRow r;
  r.phase = std::move(phase);
  r.context_tokens = context;
  r.generated_tokens = generated;
  r.samples_tokens_per_s = samples;
  r.median_tokens_per_s = median(samples);
  r.min_tokens_per_s = *std::min_element(samples.begin(), samples.end());
  r.max_tokens_per_s = *std::max_element(samples.begin(), samples.end());
  return r;
}

// `steps` greedy decode steps from the decoder's position; returns tokens/s.
double timed_decode(model::Decoder& d, int64_t steps, int64_t first_token) {
  model::Sampler greedy({});
  int64_t token = first_token;
  const auto start = Clock::now();
  for (int64_t i = 0; i < steps; ++i) token = greedy.sample(d.forward(std::span<const int64_t>(&token, 1)));
  return steps / seconds(start);
}

}  // namespace

std::string logits_row_name(DType activation, DType kv_cache) {
  std::string name = fmt::format("logits, {} activations", dtype_name(activation));
  if (kv_cache != activation) name += fmt::format(", {} kv cache", dtype_name(kv_cache));
  return name;
}

EndToEndResult run_end_to_end(const EndToEndOptions& o, const Policy policies[2],
                              const std::function<void(int)>& account,
                              const std::function<void(const std::string&)>& progress) {
  const auto say = [&](const std::string& m) {
    if (progress) progress(m);
  };
  if (o.repeats < 1) fail<ValueError>("check", "end-to-end repeats", ">= 1", std::to_string(o.repeats));
  if (o.decode_tokens < 1) fail<ValueError>("check", "end-to-end decode tokens", ">= 1", std::to_string(o.decode_tokens));
  EndToEndResult result;
  say("end-to-end: building the model");
  model::ModelSource source = model::open_model(o.model_dir, o.preset, o.seed);
  result.description = source.description();
  result.name = source.name;
  result.config_hash = source.config_hash;
  result.preset = source.from_files ? "" : source.name;
  const uint64_t mapped = source.mapped_bytes;
  const model::ModelConfig config = source.config;
  const model::ComputeDtypes dtypes = model::resolve_compute_dtypes(o.activation, o.kv_cache, config, "check");
  const DType act = dtypes.activation, kv = dtypes.kv_cache;
  // The f32 mode (f32 activations and cache) is the reference's, and a row of its own where the run's differs.
  const bool f32_mode_too = act != DType::f32 || kv != DType::f32;
  result.dtypes = {std::string(dtype_name(act)), std::string(dtype_name(kv))};
  if (f32_mode_too) result.dtypes.push_back(std::string(dtype_name(DType::f32)));
  // Resolved names only: the workload says what ran, not why (a record of --dtype bf16 and one of auto that
  // gave bf16 are of the same work, and the PyTorch driver writes the same line).
  result.dtypes_said = fmt::format("activations {}, kv cache {}", dtype_name(act), dtype_name(kv));
  std::vector<int64_t> contexts = o.decode_contexts;
  for (int64_t c : contexts)
    if (c < 1) fail<ValueError>("check", "--e2e-contexts", "positive context lengths", std::to_string(c));
  std::sort(contexts.begin(), contexts.end());
  const int64_t longest = std::max({contexts.empty() ? 0 : contexts.back(), o.prefill_tokens,
                                    o.correctness_prompt + o.correctness_steps});
  model::DecoderOptions dopt;
  dopt.activation = act;
  dopt.kv_cache = kv;
  dopt.max_context = longest + o.decode_tokens;
  // A model is only defined up to its trained length: rope and attention past it are numbers, not answers.
  if (dopt.max_context > config.max_position_embeddings)
    fail<ValueError>("check", "--e2e-contexts / --e2e-prefill",
                     fmt::format("contexts (+ {} decode steps) within the model's max_position_embeddings {}",
                                 o.decode_tokens, config.max_position_embeddings),
                     std::to_string(dopt.max_context));
  // The f32 mode's decoder shares the checkpoint's tensors (a copy of the map, not of the weights; bf16, f16 and
  // FP8 projections are used in place under f32 activations). Released once its logits are taken.
  std::optional<model::Decoder> f32_decoder;
  if (f32_mode_too) {
    model::DecoderOptions f32_options = dopt;
    f32_options.activation = f32_options.kv_cache = DType::f32;
    f32_decoder.emplace(model::build_decoder(config, source.weights, f32_options, source.name));
  }
  model::Decoder decoder = model::build_decoder(config, std::move(source.weights), dopt, source.name);
  model::Decoder& reference_decoder = f32_decoder ? *f32_decoder : decoder;
  const auto under = [&](int side, const std::function<void()>& work) {
    ScopedPolicy scope(policies[side]);
    reset_dispatch_counts();
    work();
    if (account) account(side);
  };

  // Correctness: the reference tier's greedy continuation in the f32 mode (float64 inside each op, f32 between
  // them and in the cache: the least rounding fourfold computes), then every side's logits over the same
  // tokens, in the run's mode and in the f32 mode.
  say("end-to-end: reference-tier logits in f32 (prompt and greedy steps)");
  const std::vector<int64_t> prompt = model::synthetic_prompt(o.correctness_prompt, config.vocab_size, o.seed);
  Tensor reference;
  std::vector<int64_t> continuation;   // fed to every side, so all are compared on the same positions
  {
    ScopedPolicy scope(Policy::parse("reference"));
    model::Sampler greedy({});
    continuation = model::generate(reference_decoder, prompt, o.correctness_steps, greedy).tokens;
    reference = model::teacher_forced_logits(reference_decoder, prompt, continuation);
  }
  const Tensor reference64 = reference.to(DType::f64);
  std::vector<model::Decoder*> modes = {&decoder};
  if (f32_decoder) modes.push_back(&*f32_decoder);
  for (int side = 0; side < 2; ++side)
    for (model::Decoder* mode : modes) {
      const std::string name = logits_row_name(mode->options().activation, mode->options().kv_cache);
      say(fmt::format("end-to-end: {} under '{}'", name, policies[side].to_string()));
      under(side, [&] {
        const Tensor got = model::teacher_forced_logits(*mode, prompt, continuation);
        EndToEndRow row;
        row.name = name;
        row.psnr_db = compare_to_reference(got, reference64).psnr_db;
        row.top1_agreement_percent = top1_agreement_percent(reference, got);
        row.mean_kl = mean_kl_divergence(reference, got);
        result.sides[side].logits.push_back(row);
      });
    }
  f32_decoder.reset();

  // Throughput. Warm-up: one short prefill and decode per side.
  const std::vector<int64_t> long_prompt = model::synthetic_prompt(longest, config.vocab_size, o.seed + 1);
  for (int side = 0; side < 2; ++side)
    under(side, [&] {
      decoder.reset();
      decoder.forward(std::span<const int64_t>(long_prompt.data(), std::min<int64_t>(16, longest)));
      timed_decode(decoder, 2, long_prompt[0]);
    });
  std::vector<double> prefill[2];
  for (int r = 0; r < o.repeats; ++r)
    for (int side = 0; side < 2; ++side) {
      say(fmt::format("end-to-end: prefill of {} tokens, repeat {}/{}", o.prefill_tokens, r + 1, o.repeats));
      under(side, [&] {
        decoder.reset();
        const auto start = Clock::now();
        decoder.forward(std::span<const int64_t>(long_prompt.data(), o.prefill_tokens));
        prefill[side].push_back(o.prefill_tokens / seconds(start));
      });
    }
  for (int side = 0; side < 2; ++side) {
    result.sides[side].throughput.warmup_runs = 1;
    result.sides[side].throughput.rows.push_back(row_of("prefill", o.prefill_tokens, 0, prefill[side]));
  }
  decoder.reset();
  for (int64_t context : contexts) {
    say(fmt::format("end-to-end: filling the cache to {} positions", context));
    under(1, [&] {   // the fill is untimed; it runs under the candidate's policy
      const int64_t have = decoder.position();
      decoder.forward(std::span<const int64_t>(long_prompt.data() + have, context - have));
    });
    std::vector<double> samples[2];
    for (int r = 0; r < o.repeats; ++r)
      for (int side = 0; side < 2; ++side) {
        say(fmt::format("end-to-end: decode at context {}, repeat {}/{}", context, r + 1, o.repeats));
        under(side, [&] {
          samples[side].push_back(timed_decode(decoder, o.decode_tokens, long_prompt[context - 1]));
          decoder.rewind(context);
        });
      }
    for (int side = 0; side < 2; ++side)
      result.sides[side].throughput.rows.push_back(row_of("decode", context, o.decode_tokens, samples[side]));
  }

  // Memory, one side after the other: one prefill of the correctness prompt and its greedy steps.
  for (int side = 0; side < 2; ++side) {
    say(fmt::format("end-to-end: memory under '{}'", policies[side].to_string()));
    under(side, [&] {
      result.sides[side].memory = measure_memory([&] {
        model::Sampler greedy({});
        model::generate(decoder, prompt, o.correctness_steps, greedy);
      });
      result.sides[side].memory.mapped_weights_bytes = mapped;
    });
  }
  return result;
}

}  // namespace fourfold
