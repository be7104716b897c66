// Reading JSON that fourfold does not control, value by value: each one checked for its type and range where it
// is read, and every problem one FormatError of one wording, "<source>: field '<path>': expected <what>, found
// <type> <excerpt>". The readers of suites, config.json (decoders and the Wan VAE), generation_config.json,
// tokenizer.json and records all check or word through it; CheckedObject adds the defaults of config files.
// Header-only, like bounded_json.h, so that the fuzz builds need no more sources.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fourfold/errors.h"

namespace fourfold {

class CheckedJson {
 public:
  using json = nlohmann::json;

  // `source` names the file in every message: "config.json of /m", "suite file 'moe.json'".
  explicit CheckedJson(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  [[noreturn]] void bad_text(const std::string& path, std::string_view expected, std::string_view found) const {
    fail_field<FormatError>(source_, path.empty() ? "(document)" : path, expected, found);
  }
  [[noreturn]] void bad(const std::string& path, std::string_view expected, const json& found) const {
    bad_text(path, expected, describe(found));
  }
  // A value as the messages say it: its JSON type and its text, cut to a readable length ("number -4",
  // "string \"many\"", "array [1,2]").
  template <class Json>
  static std::string describe(const Json& v) {
    if (v.is_discarded()) return "nothing";
    std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (text.size() > 80) text = text.substr(0, 77) + "...";
    return std::string(v.type_name()) + " " + text;
  }

  // "a.b", "a[3]": the path of a member and of an element.
  static std::string sub(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }
  static std::string at(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }

  // A member, nullptr when absent or null (Hugging Face writes "rope_scaling": null for "none").
  static const json* find(const json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }

  // The path "" is the document itself, said as "(document)".
  void object(const json& v, const std::string& path) const {
    if (!v.is_object()) bad(path, "an object", v);
  }
  // Only the listed keys: a misspelt field is an error, not silently ignored.
  void only_keys(const json& v, const std::string& path, std::initializer_list<const char*> keys) const {
    object(v, path);
    for (auto it = v.begin(); it != v.end(); ++it) {
      bool known = false;
      for (const char* k : keys) known = known || it.key() == k;
      if (!known) {
        std::string names;
        for (const char* k : keys) names += (names.empty() ? "" : ", ") + std::string(k);
        bad_text(sub(path, it.key()), "a known field (" + names + ")", "an unknown field");
      }
    }
  }
  // A member that must be there (null counts as there: the value's own check refuses it).
  const json& need(const json& v, const std::string& path, const char* key) const {
    object(v, path);
    const auto it = v.find(key);
    if (it == v.end()) bad_text(sub(path, key), "a value", "none (missing)");
    return *it;
  }

  // An integer in [min, max] (int64: a larger unsigned JSON integer is refused, not wrapped).
  int64_t integer(const json& v, const std::string& path, int64_t min = 1,
                  int64_t max = std::numeric_limits<int64_t>::max()) const {
    const bool fits = v.is_number_integer() &&
                      (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()));
    if (!fits || v.get<int64_t>() < min || v.get<int64_t>() > max) bad(path, integer_range(min, max), v);
    return v.get<int64_t>();
  }
  // A number (JSON has no infinity or NaN, and parse_bounded_json refuses one outside the double range).
  double number(const json& v, const std::string& path) const {
    if (!v.is_number()) bad(path, "a number", v);
    return v.get<double>();
  }
  bool boolean(const json& v, const std::string& path) const {
    if (!v.is_boolean()) bad(path, "true or false", v);
    return v.get<bool>();
  }
  std::string string(const json& v, const std::string& path) const {
    if (!v.is_string()) bad(path, "a string", v);
    return v.get<std::string>();
  }
  const json& array(const json& v, const std::string& path, bool non_empty = true,
                    size_t max_size = std::numeric_limits<size_t>::max()) const {
    if (!v.is_array() || (non_empty && v.empty()) || v.size() > max_size)
      bad(path,
          fmt::format("{}{}", non_empty ? "a non-empty array" : "an array",
                      max_size == std::numeric_limits<size_t>::max() ? "" : fmt::format(" of at most {}", max_size)),
          v);
    return v;
  }
  // Each element read by `read(element, its path)`.
  template <class T, class Read>
  std::vector<T> elements(const json& v, const std::string& path, Read read, bool non_empty = true,
                          size_t max_size = std::numeric_limits<size_t>::max()) const {
    array(v, path, non_empty, max_size);
    std::vector<T> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(read(v[i], at(path, i)));
    return out;
  }
  std::vector<int64_t> integers(const json& v, const std::string& path, int64_t min = 1) const {
    return elements<int64_t>(v, path, [&](const json& e, const std::string& p) { return integer(e, p, min); });
  }
  // One of `options`' names, as its value.
  template <class E>
  E choice(const json& v, const std::string& path, std::initializer_list<std::pair<const char*, E>> options) const {
    const std::string name = string(v, path);
    std::string names;
    for (const auto& [n, e] : options) {
      if (name == n) return e;
      names += (names.empty() ? "" : ", ") + std::string(n);
    }
    bad(path, "one of " + names, v);
  }

 private:
  static std::string integer_range(int64_t min, int64_t max) {
    constexpr int64_t lowest = std::numeric_limits<int64_t>::min(), highest = std::numeric_limits<int64_t>::max();
    if (min == lowest && max == highest) return "an integer in the int64 range";
    if (max == highest) return min == 1 ? "a positive integer" : fmt::format("an integer >= {}", min);
    return fmt::format("an integer in [{}, {}]", min, max);
  }

  std::string source_;
};

// The keys of one JSON object read with a default where a key is absent or null (as config.json files leave out
// what transformers or diffusers default), each value checked by CheckedJson at its path ("rope_scaling.factor").
class CheckedObject {
 public:
  using json = nlohmann::json;

  CheckedObject(const json& object, std::string source, std::string prefix = "")
      : object_(object), check_(std::move(source)), prefix_(std::move(prefix)) {}

  const json* find(const char* key) const { return CheckedJson::find(object_, key); }
  const json& require(const char* key) const {
    if (const json* v = find(key)) return *v;
    check_.bad_text(path(key), "a value", "none (missing)");
  }
  [[noreturn]] void bad(const char* key, std::string_view expected, const json& found) const {
    check_.bad(path(key), expected, found);
  }

  int64_t integer(const char* key, std::optional<int64_t> fallback, int64_t min, int64_t max) const {
    const json* v = find(key);
    if (!v && fallback) return *fallback;
    return check_.integer(v ? *v : require(key), path(key), min, max);
  }
  double number(const char* key, std::optional<double> fallback = std::nullopt) const {
    const json* v = find(key);
    if (!v && fallback) return *fallback;
    return check_.number(v ? *v : require(key), path(key));
  }
  bool boolean(const char* key, bool fallback) const {
    const json* v = find(key);
    return v ? check_.boolean(*v, path(key)) : fallback;
  }
  std::string string(const char* key, std::optional<std::string> fallback = std::nullopt) const {
    const json* v = find(key);
    if (!v && fallback) return *fallback;
    return check_.string(v ? *v : require(key), path(key));
  }
  std::string path(const char* key) const { return CheckedJson::sub(prefix_, key); }
  const std::string& file() const { return check_.source(); }
  const CheckedJson& checks() const { return check_; }

 private:
  const json& object_;
  CheckedJson check_;
  std::string prefix_;
};

}  // namespace fourfold
