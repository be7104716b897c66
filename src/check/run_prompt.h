// What `fourfold run` feeds the decoder and how it samples: the prompt's token ids from text (through the
// folder's tokenizer.json), a file, ids as given or a synthetic prompt; the sampler's settings from the command
// line or generation_config.json, as transformers reads them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/llm/generation_config.h"
#include "model/llm/sampler.h"
#include "model/tokenizer/tokenizer.h"

namespace fourfold {

struct PromptRequest {
  std::string text, file, ids;     // --prompt, --prompt-file, --prompt-ids: at most one is given
  int64_t synthetic_tokens = 32;   // none given: this many ids drawn from `seed`
  uint64_t seed = 0;
};

struct Prompt {
  std::vector<int64_t> ids;
  std::string source;   // "--prompt (12 tokens)", "synthetic (32 ids from seed 0)"
};

// `model_dir` names where a missing tokenizer was looked for. `context` (max_position_embeddings) caps a prompt
// file's size before any of it is read.
Prompt make_prompt(const PromptRequest& request, const std::optional<model::Tokenizer>& tokenizer,
                   const std::string& model_dir, int64_t vocab, int64_t context);

// The command line's sampling when it set any of it, else generation_config.json's, else greedy; `said` tells
// which, for the output and the record's workload.
model::SamplerOptions choose_sampling(const model::SamplerOptions& command_line, bool command_line_set,
                                      const std::optional<model::GenerationConfig>& generation, std::string& said);

}  // namespace fourfold
