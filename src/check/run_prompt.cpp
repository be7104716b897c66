#include "check/run_prompt.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/llm/generation.h"

namespace fourfold {
namespace {

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

}  // namespace

Prompt make_prompt(const PromptRequest& r, const std::optional<model::Tokenizer>& tokenizer,
                   const std::string& model_dir, int64_t vocab, int64_t context) {
  const int given = !r.text.empty() + !r.file.empty() + !r.ids.empty();
  if (given > 1) fail<ValueError>("run", "--prompt", "one of --prompt, --prompt-file, --prompt-ids", "several");
  if (!r.ids.empty()) return {parse_ids(r.ids, vocab), "--prompt-ids"};
  if (given == 0)
    return {model::synthetic_prompt(r.synthetic_tokens, vocab, r.seed),
            fmt::format("synthetic ({} ids from seed {})", r.synthetic_tokens, r.seed)};
  const char* option = r.text.empty() ? "--prompt-file" : "--prompt";
  if (!tokenizer)
    fail<ValueError>("run", option, "a model folder with a tokenizer.json (--model DIR)",
                     model_dir.empty() ? "a preset, which has no tokenizer" : "none in " + model_dir);
  const std::string from = r.text.empty() ? "--prompt-file " + r.file : "--prompt";
  const std::string text = r.text.empty() ? read_prompt_file(r.file, context) : r.text;
  // `from` names the option and the file in the tokenizer's refusals (invalid UTF-8 and its byte offset).
  std::vector<int64_t> ids = tokenizer->encode(text, /*add_special_tokens=*/true, from);
  if (ids.empty()) fail<ValueError>("run", from, "text that encodes to at least one token", "none");
  for (int64_t id : ids)
    if (id >= vocab)
      fail<ValueError>("run", from, fmt::format("token ids below the model's vocab_size {}", vocab),
                       fmt::format("id {} from tokenizer.json", id));
  return {ids, fmt::format("{} ({} tokens)", option, ids.size())};
}

// transformers' rules: no do_sample means greedy; with it, temperature 1, top_k 50, top_p 1 unless the file says
// otherwise.
model::SamplerOptions choose_sampling(const model::SamplerOptions& command_line, bool command_line_set,
                                      const std::optional<model::GenerationConfig>& g, std::string& said) {
  model::SamplerOptions s = command_line;
  if (command_line_set || !g) {
    said = command_line_set ? "from the command line" : "greedy (no generation_config.json)";
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

}  // namespace fourfold
