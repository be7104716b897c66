// What every suite format's reader shares: the checked reader that names the file and the field ("suite file
// 'x.json': field 'shapes[3].n': expected a positive integer, found number -4", model/formats/checked_json.h)
// with the suites' own dtype fields, and the parts several formats have. Each format's reader is in its op's
// case file (check/op_cases/op_case.h, SuiteFormat); check/suites.cpp picks it by the file's "op".
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/bench_case.h"
#include "fourfold/dtype.h"
#include "fourfold/errors.h"
#include "model/formats/checked_json.h"

namespace fourfold {

class SuiteReader : public CheckedJson {
 public:
  using json = nlohmann::json;
  explicit SuiteReader(const std::string& file) : CheckedJson(fmt::format("suite file '{}'", file)) {}

  bool has(const json& v, const char* key) const { return v.is_object() && v.contains(key); }
  std::vector<bool> booleans(const json& v, const std::string& path) const {
    return elements<bool>(v, path, [&](const json& e, const std::string& p) { return boolean(e, p); });
  }
  DType dtype(const json& v, const std::string& path) const {
    const std::string name = string(v, path);
    try {
      return parse_dtype(name);
    } catch (const DTypeError&) {
      bad(path, "a dtype name (f32, bf16, f16, float8_e4m3fn, ...)", v);
    }
  }
  std::vector<DType> dtypes(const json& v, const std::string& path) const {
    return elements<DType>(v, path, [&](const json& e, const std::string& p) { return dtype(e, p); });
  }
};

// A shape's name from its model and projection (the linear and fp8 suites).
inline std::string describe_name(const nlohmann::json& entry) {
  std::string s = entry.value("model", std::string());
  const std::string proj = entry.value("projection", std::string());
  if (!proj.empty()) s += (s.empty() ? "" : " ") + proj;
  return s;
}

// A suite file of the `cases` form (row_ops, conv): the top-level fields, then fn(path, case) for each case.
template <class Fn>
void for_each_case(const SuiteReader& r, const nlohmann::json& j, Suite& suite, Fn&& fn) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "cases"});
  const nlohmann::json& cases = r.array(r.need(j, "", "cases"), "cases");
  suite.entries = static_cast<int64_t>(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) fn(SuiteReader::at("cases", i), cases[i]);
}

// The weight shapes of the linear and fp8 suites: for each entry of "shapes", its n, k and name (its model and
// projection), then fn(path, entry, n, k, name); `own_key` is the one key the format adds to an entry.
template <class Fn>
void for_each_weight_shape(const SuiteReader& r, const nlohmann::json& j, Suite& suite, const char* own_key, Fn&& fn) {
  const nlohmann::json& shapes = r.array(r.need(j, "", "shapes"), "shapes");
  suite.entries = static_cast<int64_t>(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string path = SuiteReader::at("shapes", i);
    const nlohmann::json& s = shapes[i];
    r.only_keys(s, path, {"n", "k", "model", "projection", own_key});
    const int64_t n = r.integer(r.need(s, path, "n"), path + ".n");
    const int64_t k = r.integer(r.need(s, path, "k"), path + ".k");
    r.string(r.need(s, path, "model"), path + ".model");
    r.string(r.need(s, path, "projection"), path + ".projection");
    fn(path, s, n, k, describe_name(s));
  }
}

}  // namespace fourfold
