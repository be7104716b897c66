// JSON from files fourfold does not control (config.json, safetensors headers, index.json, tokenizer.json,
// records, suites), parsed only after its nesting is bounded: nlohmann's parser is iterative, but freeing a
// value and printing it for an error message recurse once per level, so a file of arrays nested 100,000 deep
// overflowed the stack. Header-only so that the fuzz builds need no more sources.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fourfold/errors.h"

namespace fourfold {

inline constexpr int kMaxJsonDepth = 128;   // the deepest real file (tokenizer.json) nests about 8 levels

// FormatError naming `file` and `what` when `text` nests objects and arrays deeper than max_depth (found by a
// scan that skips strings, before any parsing), or is not valid JSON, or holds a number outside the double range.
template <class Json = nlohmann::json>
Json parse_bounded_json(std::string_view text, const std::string& file, std::string_view what,
                        int max_depth = kMaxJsonDepth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        fail<FormatError>(file, what, fmt::format("JSON nested at most {} levels", max_depth),
                          fmt::format("deeper nesting at byte {}", i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {   // parse_error, and out_of_range for 1e999
    fail<FormatError>(file, what, "valid JSON with numbers in the double range", e.what());
  }
}

}  // namespace fourfold
