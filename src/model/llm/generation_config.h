// generation_config.json: the sampling defaults and stop tokens a model folder ships with (transformers'
// GenerationConfig). `fourfold run` takes them unless the command line says otherwise, and says which it took.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fourfold::model {

struct GenerationConfig {
  std::vector<int64_t> eos_token_ids;   // empty: the file names none (config.json's then apply)
  std::optional<int64_t> bos_token_id;
  std::optional<bool> do_sample;        // false: greedy, whatever temperature says (transformers' rule)
  std::optional<double> temperature, top_p;
  std::optional<int64_t> top_k;
  std::optional<int64_t> max_new_tokens;
  std::vector<std::string> not_applied;   // keys that change sampling and that fourfold does not implement
};

// FormatError naming `file_name` and the key for bad JSON, ill-typed values or values out of their range
// (temperature >= 0, top_p in (0, 1], top_k, max_new_tokens and token ids >= 0).
GenerationConfig parse_generation_config(std::string_view json_text, const std::string& file_name);

}  // namespace fourfold::model
