// Prefill then decode, timed: what `fourfold run` and the check's end-to-end records measure.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "fourfold/profile.h"
#include "model/llm/decoder.h"
#include "model/llm/sampler.h"

namespace fourfold::model {

// A deterministic prompt of n token ids in [0, vocab) from a seed (the built-in workloads have no tokenizer).
std::vector<int64_t> synthetic_prompt(int64_t n, int64_t vocab, uint64_t seed);

struct Generation {
  std::vector<int64_t> tokens;          // generated, in order (a stop token included)
  bool stopped = false;                 // ended at a stop token before the count
  double prefill_seconds = 0.0;         // the prompt's forward (and its first sampled token)
  double decode_seconds = 0.0;          // the generated tokens after the first: one forward each
  int64_t decoded_tokens = 0;           // forwards timed in decode_seconds
  int64_t decode_minor_faults = 0;      // page faults of the process during the decode steps (getrusage)
  int64_t decode_major_faults = 0;
  int64_t context = 0;                  // positions in the cache at the end
  std::vector<double> step_seconds;     // each decode step's forward and sampling (decode_seconds' parts)
  double prefill_tokens_per_s(int64_t prompt) const { return prefill_seconds > 0 ? prompt / prefill_seconds : 0.0; }
  double decode_tokens_per_s() const { return decode_seconds > 0 ? decoded_tokens / decode_seconds : 0.0; }
};

// From position 0: prefill `prompt`, sample a token, then `generate - 1` decode steps (the last sampled token
// needs no forward). progress(done, total) after every forward.
Generation generate(Decoder& decoder, const std::vector<int64_t>& prompt, int64_t generate, Sampler& sampler,
                    const std::function<void(int64_t, int64_t)>& progress = {});

// What a user-facing generation adds to the benchmark one: stop tokens, each token handed over as it is sampled
// (to print its text), and the logits of every position kept.
struct GenerateOptions {
  std::vector<int64_t> stop_tokens;                   // generation ends after sampling one of these
  std::function<void(int64_t token)> on_token;        // its time is not counted in decode_seconds
  bool keep_logits = false;                           // Generation::logits: [P + n, V] f32, row i after token i
  bool profile = false;                               // time each op of the decode steps (fourfold/profile.h)
  std::function<void()> before_step;                  // run before each decode step, not timed (run's read probe)
};
struct GenerationWithLogits : Generation {
  Tensor logits;
  std::vector<OpProfileRow> profile;                  // the decode steps' ops (the sampler's included), with profile
};
// As generate(), and with keep_logits the prefill computes every prompt position's logits (lm_head over the
// whole prompt, counted in prefill_seconds) and one more forward after the last token gives its row (not timed).
GenerationWithLogits generate(Decoder& decoder, const std::vector<int64_t>& prompt, int64_t generate,
                              Sampler& sampler, const GenerateOptions& options,
                              const std::function<void(int64_t, int64_t)>& progress = {});

// Logits [P + n, V] (f32) of the prompt's positions (one prefill) and of each of `continuation`'s n tokens fed
// one decode step at a time: the rows a correctness comparison of two policies lines up.
Tensor teacher_forced_logits(Decoder& decoder, const std::vector<int64_t>& prompt,
                             const std::vector<int64_t>& continuation);

}  // namespace fourfold::model
