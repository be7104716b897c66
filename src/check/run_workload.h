// `fourfold run`'s workload: a model folder or preset opened, one prompt prefilled and decoded under one policy,
// and what that gives on the records' terms: throughput, the decode against its bandwidth floor (after the run
// and step by step), the prefill against the compute peak of the same run, the tiers used, memory at the three
// levels and what lies outside the allocator. The command only parses options and prints a RunOutcome.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/records.h"
#include "check/roofline_probes.h"
#include "check/run_prompt.h"
#include "check/statistics.h"
#include "fourfold/memory_probe.h"
#include "fourfold/policy.h"
#include "model/llm/bandwidth_floor.h"
#include "model/llm/decode_profile.h"
#include "model/llm/generation.h"
#include "model/formats/safetensors.h"

namespace fourfold {

struct RunRequest {
  std::string model_dir, preset;   // one of them; both empty: the preset tiny-moe
  int64_t layers = 0;              // a preset's layer count (0: its own)
  model::WeightResidency residency = model::WeightResidency::copy;
  PromptRequest prompt;
  int64_t gen = 16;
  bool ignore_eos = false, allow_past_max_position = false;
  bool keep_logits = false;        // every position's logits (lm_head over the whole prompt, timed in the prefill)
  bool profile = false;            // the decode step's time per op
  std::string dtype = "auto", kv_dtype = "auto";   // model/llm/compute_dtypes.h
  model::SamplerOptions sampling;  // with sampling_set, instead of generation_config.json's
  bool sampling_set = false;
  Policy policy;
  bool quick_probe = true;
  int64_t step_probe_mib = 128;    // the read probe before each decode step (0: none)
};

// What is settled before the prefill, for the command to show while the decode streams.
struct RunSetup {
  bool from_files = false;
  uint64_t loaded_bytes = 0;       // mapped plus read into memory
  double load_seconds = 0.0;
  model::WeightResidency residency = model::WeightResidency::map;
  std::vector<std::string> config_lines;   // defaults taken and notes from config.json
  std::string prompt_source, sampling_said, stop_said;
  int64_t positions = 0, max_position = 0;  // prompt + gen against max_position_embeddings
  bool past_max = false;
  bool streams_text = false;       // a tokenizer turns the tokens into text as they come
};

struct RunHooks {
  std::function<void(const std::string&)> status;   // what the run is doing now (a progress line)
  std::function<void(const RunSetup&)> ready;       // loaded and set up, before the prefill
  std::function<void(const std::string&)> text;     // decoded text as it streams (and its tail at the end)
};

struct TierUse {
  std::string op, tier, variant;
  uint64_t calls = 0;
};

// The decode step by step: step i's floor at the read probe sampled just before it, over its own time.
struct StepFloor {
  Summary probe, fraction;
  std::vector<double> probe_samples;
  uint64_t probe_bytes = 0;
};

struct RunOutcome {
  RunSetup setup;
  std::string description;         // the model
  std::string weights_said;        // "bfloat16", "float8_e4m3fn, routed experts float4_e2m1fn_x2 (NVFP4)"
  DType activation = DType::bf16, kv_cache = DType::bf16;
  std::string activation_from, kv_cache_from;
  std::string policy_said;
  int threads = 1;
  Prompt prompt;
  model::GenerationWithLogits generation;
  bool kept_logits = false, profiled = false;   // the request's keep_logits and profile
  double prefill_tokens_per_s = 0.0, decode_tokens_per_s = 0.0;
  double prefill_flops = 0.0, prefill_gflop_per_s = 0.0;
  RooflineProbe probe;             // after the run
  ComputePeak peak;
  double mean_context = 0.0;
  model::DecodeFloor floor;        // at the mean context and the probe after the run
  std::optional<StepFloor> steps;
  model::DecodeProfile profile;
  std::vector<TierUse> tiers;
  ProcessMemory process_now;       // after the run, before the probe's buffer
  MemoryRecord memory;
  uint64_t kv_cache_bytes = 0, linear_conv_bytes = 0, linear_recurrent_bytes = 0;
  uint64_t mapped_bytes = 0, file_copy_bytes = 0;
  uint64_t step_probe_bytes = 0;
  uint64_t weights_copied_bytes = 0;
  std::vector<std::string> weights_copied;   // what the load copied and why
  RecordSet records;               // throughput and memory under the run's manifest and workload
};

RunOutcome run_workload(const RunRequest& request, const RunHooks& hooks = {});

// The record set with a "run" object beside the records (docs/records_schema.md), as JSON text.
std::string run_record_json(const RunOutcome& outcome);

}  // namespace fourfold
