#include "model/llm/generation_config.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fourfold/errors.h"
#include "model/formats/bounded_json.h"
#include "model/formats/checked_json.h"
#include "model/formats/json_excerpt.h"

namespace fourfold::model {

using nlohmann::json;

GenerationConfig parse_generation_config(std::string_view json_text, const std::string& file_name) {
  const json root = parse_bounded_json(json_text, file_name, "generation_config.json");
  const CheckedJson check(file_name);
  if (!root.is_object()) check.bad("", "a JSON object", root);
  const auto find = [&](const char* key) { return CheckedJson::find(root, key); };
  const auto bad = [&](const char* key, std::string_view expected) -> void { check.bad(key, expected, root.at(key)); };
  GenerationConfig g;
  const auto token = [&](const char* key, const json& v) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) bad(key, "a token id or a list of token ids");
    return v.get<int64_t>();
  };
  if (const json* v = find("eos_token_id")) {
    if (v->is_array()) {
      for (const json& x : *v) g.eos_token_ids.push_back(token("eos_token_id", x));
    } else {
      g.eos_token_ids.push_back(token("eos_token_id", *v));
    }
  }
  if (const json* v = find("bos_token_id")) g.bos_token_id = token("bos_token_id", *v);
  if (const json* v = find("do_sample")) {
    if (!v->is_boolean()) bad("do_sample", "true or false");
    g.do_sample = v->get<bool>();
  }
  // Checked here, where the file and the key can be named, not left for the sampler to refuse as its own input.
  const auto number = [&](const char* key, std::optional<double>& out, std::string_view expected, auto in_range) {
    if (const json* v = find(key)) {
      if (!v->is_number() || !std::isfinite(v->get<double>()) || !in_range(v->get<double>())) bad(key, expected);
      out = v->get<double>();
    }
  };
  number("temperature", g.temperature, "a finite number >= 0", [](double t) { return t >= 0.0; });
  number("top_p", g.top_p, "a number in (0, 1] (the nucleus' probability mass)",
         [](double p) { return p > 0.0 && p <= 1.0; });
  const auto integer = [&](const char* key, std::optional<int64_t>& out) {
    if (const json* v = find(key)) {
      if (!v->is_number_integer() || v->get<int64_t>() < 0) bad(key, "an integer >= 0");
      out = v->get<int64_t>();
    }
  };
  integer("top_k", g.top_k);
  integer("max_new_tokens", g.max_new_tokens);
  // Sampling keys whose non-neutral values fourfold's sampler does not apply: said, not silently dropped.
  for (const auto& [key, neutral] : {std::pair<const char*, double>{"repetition_penalty", 1.0}, {"min_p", 0.0},
                                     {"typical_p", 1.0}, {"presence_penalty", 0.0}, {"frequency_penalty", 0.0}}) {
    const json* v = find(key);
    if (v && v->is_number() && v->get<double>() != neutral)
      g.not_applied.push_back(fmt::format("{} = {}", key, json_excerpt(*v)));
  }
  return g;
}

}  // namespace fourfold::model
