#include "check/suites.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "check/op_cases/op_case.h"
#include "check/suite_reader.h"
#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/formats/bounded_json.h"

namespace fourfold {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s.append(sep);
    s.append(items[i]);
  }
  return s;
}

// The names a row_ops case's "op" may give: the case files that read row_ops cases.
std::string row_op_names() {
  std::vector<std::string> names;
  for (const OpCases& e : all_op_cases())
    if (e.is_row_op()) names.emplace_back(e.name);
  return join(names);
}

// The suite formats: row_ops, read here, and each one a case file reads.
std::string format_names() {
  std::vector<std::string> names = {"row_ops"};
  for (const OpCases& e : all_op_cases())
    if (e.suite.parse != nullptr) names.emplace_back(e.suite.name);
  std::sort(names.begin(), names.end());
  return join(names);
}

std::string executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

std::string default_suites_dir() {
  if (const char* env = std::getenv("FOURFOLD_SUITES_DIR"); env != nullptr && *env != '\0') return env;
  std::vector<std::string> tried;
  const std::string exe = executable_dir();
  if (!exe.empty()) {
    tried.push_back((fs::path(exe) / ".." / ".." / "data" / "suites").lexically_normal().string());
    tried.push_back((fs::path(exe) / ".." / "share" / "fourfold" / "suites").lexically_normal().string());
  }
  // This file is src/check/suites.cpp in the source tree; the build passes its absolute path.
  const fs::path source = fs::path(__FILE__);
  if (source.is_absolute())
    tried.push_back((source.parent_path() / ".." / ".." / "data" / "suites").lexically_normal().string());
  for (const std::string& dir : tried) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) return dir;
  }
  fail<ValueError>("suites", "directory", "data/suites next to the build or $FOURFOLD_SUITES_DIR",
                   "none of " + join(tried));
}

std::vector<std::string> list_suites(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail<ValueError>("suites", "directory", "a directory of <name>.json files", "'" + dir + "'");
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Suite load_suite(std::string_view name, const std::string& dir) {
  const std::vector<std::string> names = list_suites(dir);
  if (std::find(names.begin(), names.end(), name) == names.end())
    fail<ValueError>("bench", "suite", "one of " + join(names) + " (or all)", "'" + std::string(name) + "'");
  Suite suite = load_suite_file((fs::path(dir) / (std::string(name) + ".json")).string());
  if (suite.name != name)
    throw FormatError(fmt::format("suite file '{}': field 'suite': expected \"{}\" (the file's name), found \"{}\"",
                                  suite.path, name, suite.name));
  return suite;
}

Suite load_suite_file(const std::string& path) {
  Suite suite = parse_suite(read_regular_file(path, uint64_t(1) << 28), path);
  suite.path = path;
  return suite;
}

namespace {

// Suites of row ops and products: a list of cases, each naming its call.
void parse_row_ops(const SuiteReader& r, const json& j, Suite& suite, const std::vector<DType>& dtypes) {
  for_each_case(r, j, suite, [&](const std::string& path, const json& e) {
    r.only_keys(e, path, {"op", "name", "rows", "cols", "heads", "kv_heads", "m", "n", "k", "x", "size", "groups"});
    RowOpCase c;
    const std::string op = r.string(r.need(e, path, "op"), path + ".op");
    c.cases = find_op_cases(op);
    if (c.cases == nullptr || !c.cases->is_row_op()) r.bad(path + ".op", "one of " + row_op_names(), e["op"]);
    const RowOpFormat& format = c.cases->row_op;
    const std::string name = r.string(r.need(e, path, "name"), path + ".name");
    for (const char* key : format.fields) (void)r.need(e, path, key);
    const auto get = [&](const char* key, int64_t fallback) {
      return r.has(e, key) ? r.integer(e[key], path + "." + key) : fallback;
    };
    c.rows = get("rows", 1), c.cols = get("cols", 1), c.heads = get("heads", 1), c.kv_heads = get("kv_heads", c.heads);
    c.m = get("m", 1), c.n = get("n", 1), c.k = get("k", 1);
    c.groups = get("groups", 1);
    if (r.has(e, "x")) c.x = r.integers(e["x"], path + ".x");
    if (r.has(e, "size")) c.size = r.integers(e["size"], path + ".size");
    if (format.check != nullptr)
      if (const std::optional<RowOpProblem> problem = format.check(c)) {
        const std::string& field = problem->field;
        r.bad(path + "." + field, problem->expected, r.has(e, field.c_str()) ? e[field] : json());
      }
    const std::string shape = format.shape != nullptr ? format.shape(c) : fmt::format("x[{},{}]", c.rows, c.cols);
    for (DType dtype : dtypes) {
      BenchCase b;
      b.name = fmt::format("{} {}", c.cases->name, name);
      b.op = std::string(c.cases->op);
      b.shape = shape;
      b.dtype = dtype;
      b.params = c;
      suite.cases.push_back(std::move(b));
    }
  });
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const RowOpCase& c) {
  j = {{"rows", c.rows}, {"cols", c.cols}, {"heads", c.heads}, {"kv_heads", c.kv_heads}, {"m", c.m}, {"n", c.n},
       {"k", c.k}, {"groups", c.groups}, {"x", c.x}, {"size", c.size}};
}

nlohmann::ordered_json case_params_json(const CaseParams& params) {
  return std::visit([](const auto& p) { return nlohmann::ordered_json(p); }, params);
}

Suite parse_suite(std::string_view text, const std::string& source) {
  const SuiteReader r(source);
  const json j = parse_bounded_json(text, "suite file " + source, "JSON");
  r.object(j, "");
  Suite suite;
  suite.name = r.string(r.need(j, "", "suite"), "suite");
  if (suite.name.empty()) r.bad("suite", "a non-empty name", j["suite"]);
  suite.op = r.string(r.need(j, "", "op"), "op");
  suite.description = r.has(j, "description") ? r.string(j["description"], "description") : std::string();
  if (r.has(j, "generated_by")) r.string(j["generated_by"], "generated_by");
  const std::vector<DType> dtypes = r.dtypes(r.need(j, "", "dtypes"), "dtypes");
  if (suite.op == "row_ops") {
    parse_row_ops(r, j, suite, dtypes);
  } else {
    const auto& entries = all_op_cases();
    const auto reader = std::find_if(entries.begin(), entries.end(), [&](const OpCases& e) {
      return e.suite.parse != nullptr && e.suite.name == suite.op;
    });
    if (reader == entries.end()) r.bad("op", "one of " + format_names(), j["op"]);
    reader->suite.parse(r, j, suite, dtypes);
  }
  for (BenchCase& c : suite.cases) {
    c.suite = suite.name;
    if (c.op.empty()) c.op = suite.op;   // a suite's case may name another op (moe: moe_experts)
  }
  return suite;
}

}  // namespace fourfold
