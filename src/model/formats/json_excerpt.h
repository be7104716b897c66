// A JSON value as it appears in a parser's error message: its text, cut to a readable length (a fuzzed
// config.json or safetensors header can hold megabytes), invalid UTF-8 replaced rather than thrown on.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fourfold {

inline std::string json_excerpt(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 80) {
    text.resize(77);
    text += "...";
  }
  return text;
}

}  // namespace fourfold
