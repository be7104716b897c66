// The end-to-end workloads of the check (DESIGN.md section 2): the decoder on a model folder or a
// preset built in memory, under the baseline and the candidate policy. Throughput (prefill tokens/s; decode
// tokens/s at given contexts), correctness of each side's logits against the reference tier over a prompt
// plus greedy steps, and memory at the three levels around one prefill and decode. The dtypes follow the
// checkpoint unless set (model/llm/compute_dtypes.h); the logits are judged in that mode and, where it is not f32
// throughout, in the f32 mode too, so the record shows what the faster mode costs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "check/records.h"
#include "fourfold/policy.h"

namespace fourfold {

struct EndToEndOptions {
  bool enabled = true;
  std::string model_dir;                         // a Hugging Face folder; empty: the preset
  std::string preset = "tiny-moe";               // built in memory with synthetic weights from `seed`
  uint64_t seed = 0;
  // DESIGN.md's default figures: decode at contexts 512 and 2048.
  int64_t prefill_tokens = 64;                   // the prefill figure's prompt
  std::vector<int64_t> decode_contexts = {512, 2048};
  int64_t decode_tokens = 8;                     // decode steps per timed sample
  int repeats = 3;                               // A B sample pairs per figure
  int64_t correctness_prompt = 16, correctness_steps = 32;
  std::string activation = "auto", kv_cache = "auto";   // model/compute_dtypes.h
};

// The logits row's name: "logits, bfloat16 activations"; the KV cache is named too where it differs from them.
std::string logits_row_name(DType activation, DType kv_cache);

struct EndToEndSide {
  ThroughputRecord throughput;
  std::vector<EndToEndRow> logits;   // the run's mode, then the f32 mode where the run's is not f32 throughout
  MemoryRecord memory;
};

struct EndToEndResult {
  std::string description;                        // the model, for the workload's shapes
  std::string name, config_hash, preset;          // for the manifest's workload
  std::vector<std::string> dtypes;
  std::string dtypes_said;                        // "activations bfloat16, kv cache bfloat16": the run's mode
  EndToEndSide sides[2];                          // baseline, candidate
};

// `account(side)` is called after each stretch of work under one side's policy, with the dispatch counters
// reset before it, so the caller can add them to that side's manifest.
EndToEndResult run_end_to_end(const EndToEndOptions& options, const Policy policies[2],
                              const std::function<void(int)>& account,
                              const std::function<void(const std::string&)>& progress = {});

}  // namespace fourfold
