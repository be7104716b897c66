#include "check/suites.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "check/op_cases/op_case.h"
#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/formats/bounded_json.h"
#include "model/formats/checked_json.h"

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

// Reads one suite file and says exactly which field is wrong: "suite file 'x.json': field 'shapes[3].n':
// expected a positive integer, found -4" (model/formats/checked_json.h), with the suites' own dtype fields.
class Reader : public CheckedJson {
 public:
  explicit Reader(const std::string& file) : CheckedJson(fmt::format("suite file '{}'", file)) {}

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

// The names a row_ops case's "op" may give: the case files that read row_ops cases.
std::string row_op_names() {
  std::vector<std::string> names;
  for (const OpCases& e : all_op_cases())
    if (e.is_row_op()) names.emplace_back(e.name);
  return join(names);
}

std::string describe_name(const json& entry) {
  std::string s = entry.value("model", std::string());
  const std::string proj = entry.value("projection", std::string());
  if (!proj.empty()) s += (s.empty() ? "" : " ") + proj;
  return s;
}

void parse_linear(const Reader& r, const json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "m", "bias", "weight_only", "models",
                      "shapes"});
  const std::vector<int64_t> ms = r.integers(r.need(j, "", "m"), "m");
  const std::vector<bool> biases = r.booleans(r.need(j, "", "bias"), "bias");
  // Weight-only variants, each run for every shape without bias: x dtype, weight dtype, fp8 recipe, m.
  struct WeightOnly {
    DType x, weight;
    Fp8Recipe recipe;
    std::vector<int64_t> ms;
  };
  std::vector<WeightOnly> weight_only;
  if (r.has(j, "weight_only")) {
    const json& list = r.array(j["weight_only"], "weight_only");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = Reader::at("weight_only", i);
      r.only_keys(list[i], path, {"x", "weight", "recipe", "m"});
      WeightOnly w{r.dtype(r.need(list[i], path, "x"), path + ".x"), r.dtype(r.need(list[i], path, "weight"), path + ".weight"),
                   Fp8Recipe::tensorwise, r.integers(r.need(list[i], path, "m"), path + ".m")};
      if (r.has(list[i], "recipe"))
        w.recipe = r.choice<Fp8Recipe>(list[i]["recipe"], path + ".recipe",
                                       {{"tensorwise", Fp8Recipe::tensorwise}, {"rowwise", Fp8Recipe::rowwise},
                                        {"block_128x128", Fp8Recipe::block_128x128}, {"nvfp4", Fp8Recipe::nvfp4},
                                        {"mxfp4", Fp8Recipe::mxfp4}});
      const bool fp4_recipe = w.recipe == Fp8Recipe::nvfp4 || w.recipe == Fp8Recipe::mxfp4;
      if (is_fp4(w.weight) != fp4_recipe && (is_fp4(w.weight) || is_fp8(w.weight)))
        r.bad(path + ".recipe", is_fp4(w.weight) ? "nvfp4 or mxfp4 for a float4_e2m1fn_x2 weight"
                                                  : "tensorwise, rowwise or block_128x128 for an fp8 weight",
              list[i].contains("recipe") ? list[i]["recipe"] : json("tensorwise"));
      weight_only.push_back(std::move(w));
    }
  }
  if (r.has(j, "models")) r.object(j["models"], "models");
  const json& shapes = r.array(r.need(j, "", "shapes"), "shapes");
  suite.entries = static_cast<int64_t>(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string path = Reader::at("shapes", i);
    const json& s = shapes[i];
    r.only_keys(s, path, {"n", "k", "model", "projection", "also"});
    const int64_t n = r.integer(r.need(s, path, "n"), path + ".n");
    const int64_t k = r.integer(r.need(s, path, "k"), path + ".k");
    r.string(r.need(s, path, "model"), path + ".model");
    r.string(r.need(s, path, "projection"), path + ".projection");
    if (r.has(s, "also")) r.array(s["also"], path + ".also", false);
    for (DType dtype : dtypes)
      for (int64_t m : ms)
        for (bool bias : biases) {
          BenchCase c;
          c.name = describe_name(s);
          c.shape = fmt::format("x[{},{}] w[{},{}]{}", m, k, n, k, bias ? " +bias" : "");
          c.dtype = dtype;
          c.params = LinearCase{m, n, k, bias};
          suite.cases.push_back(std::move(c));
        }
    for (const WeightOnly& w : weight_only)
      for (int64_t m : w.ms) {
        BenchCase c;
        c.name = describe_name(s);
        c.shape = fmt::format("x[{},{}] w[{},{}] {}{}", m, k, n, k, dtype_name(w.weight),
                              is_fp8(w.weight) || is_fp4(w.weight) ? " " + std::string(fp8_recipe_name(w.recipe)) : std::string());
        c.dtype = w.x;
        c.params = LinearCase{m, n, k, false, w.weight, w.recipe};
        suite.cases.push_back(std::move(c));
      }
  }
}

void parse_softmax(const Reader& r, const json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "rows", "dim", "vocabularies"});
  const std::vector<int64_t> rows = r.integers(r.need(j, "", "rows"), "rows");
  const int dim = r.has(j, "dim") ? static_cast<int>(r.integer(j["dim"], "dim", -2)) : -1;
  if (dim > 1) r.bad("dim", "-2, -1, 0 or 1 (inputs are [rows, vocab])", j["dim"]);
  const json& vocabs = r.array(r.need(j, "", "vocabularies"), "vocabularies");
  suite.entries = static_cast<int64_t>(vocabs.size());
  for (size_t i = 0; i < vocabs.size(); ++i) {
    const std::string path = Reader::at("vocabularies", i);
    const json& v = vocabs[i];
    r.only_keys(v, path, {"size", "models"});
    const int64_t cols = r.integer(r.need(v, path, "size"), path + ".size");
    std::vector<std::string> models;
    if (r.has(v, "models")) {
      const json& list = r.array(v["models"], path + ".models", false);
      for (size_t m = 0; m < list.size(); ++m) models.push_back(r.string(list[m], Reader::at(path + ".models", m)));
    }
    for (DType dtype : dtypes)
      for (int64_t n_rows : rows) {
        BenchCase c;
        c.name = models.empty() ? fmt::format("vocab {}", cols) : fmt::format("vocab {} ({})", cols, join(models, ", "));
        c.shape = fmt::format("x[{},{}] dim {}", n_rows, cols, dim);
        c.dtype = dtype;
        c.params = SoftmaxCase{n_rows, cols, dim};
        suite.cases.push_back(std::move(c));
      }
  }
}

void parse_pad(const Reader& r, const json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "value", "cases"});
  const double value = r.has(j, "value") ? r.number(j["value"], "value") : 0.0;
  const json& cases = r.array(r.need(j, "", "cases"), "cases");
  suite.entries = static_cast<int64_t>(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = Reader::at("cases", i);
    const json& e = cases[i];
    r.only_keys(e, path, {"name", "shape", "pads", "layout"});
    PadCase p;
    p.value = value;
    const std::string name = r.string(r.need(e, path, "name"), path + ".name");
    p.shape = r.integers(r.need(e, path, "shape"), path + ".shape");
    if (p.shape.size() > static_cast<size_t>(kMaxRank))
      r.bad(path + ".shape", fmt::format("at most {} dims", kMaxRank), e["shape"]);
    const json& pads_json = r.array(r.need(e, path, "pads"), path + ".pads");
    for (size_t k = 0; k < pads_json.size(); ++k) {
      if (!pads_json[k].is_number_integer()) r.bad(Reader::at(path + ".pads", k), "an integer", pads_json[k]);
      p.pads.push_back(pads_json[k].get<int64_t>());
    }
    if (p.pads.size() % 2 != 0 || p.pads.size() > 2 * p.shape.size())
      r.bad(path + ".pads", fmt::format("(before, after) pairs, at most {} entries for a rank-{} shape",
                                        2 * p.shape.size(), p.shape.size()), pads_json);
    for (size_t k = 0; k < p.pads.size(); ++k) {
      const int64_t size = p.shape[p.shape.size() - 1 - k / 2];
      if (p.pads[k] < -size) r.bad(Reader::at(path + ".pads", k), "a crop no larger than the dim", pads_json[k]);
    }
    p.layout = r.has(e, "layout")
                   ? r.choice<PadLayout>(e["layout"], path + ".layout",
                                         {{"contiguous", PadLayout::contiguous},
                                          {"channels_last", PadLayout::channels_last},
                                          {"sliced", PadLayout::sliced}})
                   : PadLayout::contiguous;
    if (p.layout == PadLayout::channels_last && p.shape.size() < 2)
      r.bad(path + ".layout", "contiguous or sliced for a 1-D shape", e["layout"]);
    for (DType dtype : dtypes) {
      BenchCase c;
      c.name = name;
      c.shape = fmt::format("x[{}] pads ({}){}{}", dims(p.shape), dims(p.pads),
                            p.layout == PadLayout::contiguous ? "" : " ",
                            p.layout == PadLayout::contiguous ? "" : pad_layout_name(p.layout));
      c.dtype = dtype;
      c.params = p;
      suite.cases.push_back(std::move(c));
    }
  }
}

void parse_moe(const Reader& r, const json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "model", "experts", "top_k",
                      "hidden_size", "moe_intermediate_size", "tokens", "routing", "projections"});
  const std::string model = r.has(j, "model") ? r.string(j["model"], "model") : std::string();
  const int64_t experts = r.integer(r.need(j, "", "experts"), "experts");
  const int64_t top_k = r.integer(r.need(j, "", "top_k"), "top_k");
  if (top_k > experts) r.bad("top_k", fmt::format("at most experts ({})", experts), j["top_k"]);
  if (r.has(j, "hidden_size")) r.integer(j["hidden_size"], "hidden_size");
  if (r.has(j, "moe_intermediate_size")) r.integer(j["moe_intermediate_size"], "moe_intermediate_size");
  const std::vector<int64_t> tokens = r.integers(r.need(j, "", "tokens"), "tokens");
  const json& routing_json = r.array(r.need(j, "", "routing"), "routing");
  std::vector<MoeRouting> routings;
  for (size_t i = 0; i < routing_json.size(); ++i)
    routings.push_back(r.choice<MoeRouting>(routing_json[i], Reader::at("routing", i),
                                            {{"even", MoeRouting::even}, {"skewed", MoeRouting::skewed},
                                             {"empty", MoeRouting::empty}}));
  const json& projs = r.array(r.need(j, "", "projections"), "projections");
  suite.entries = static_cast<int64_t>(projs.size() * tokens.size() * routings.size());
  for (size_t i = 0; i < projs.size(); ++i) {
    const std::string path = Reader::at("projections", i);
    r.only_keys(projs[i], path, {"name", "op", "n", "k"});
    const std::string name = r.string(r.need(projs[i], path, "name"), path + ".name");
    // "op": "moe_experts" times the whole routed-expert computation (n = I, k = H) instead of one grouped_mm.
    const std::string op = r.has(projs[i], "op") ? r.string(projs[i]["op"], path + ".op") : suite.op;
    if (op != "grouped_mm" && op != "moe_experts") r.bad(path + ".op", "grouped_mm or moe_experts", projs[i]["op"]);
    const int64_t n = r.integer(r.need(projs[i], path, "n"), path + ".n");
    const int64_t k = r.integer(r.need(projs[i], path, "k"), path + ".k");
    for (DType dtype : dtypes)
      for (int64_t t : tokens)
        for (MoeRouting routing : routings) {
          BenchCase c;
          c.name = fmt::format("{}{}{} {} tok {}", model, model.empty() ? "" : " ", name, t, moe_routing_name(routing));
          c.op = op;
          c.shape = op == "moe_experts" ? fmt::format("x[{},{}] gate,up[{},{},{}] down[{},{},{}] top{}", t, k, experts, n,
                                                      k, experts, k, n, top_k)
                                        : fmt::format("a[{},{}] b[{},{},{}] top{}", t * top_k, k, experts, k, n, top_k);
          c.dtype = dtype;
          c.params = MoeCase{t, experts, top_k, n, k, name, routing};
          suite.cases.push_back(std::move(c));
        }
  }
}

void parse_attention(const Reader& r, const json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "model", "batch", "q_heads",
                      "kv_heads", "head_dim", "cases"});
  AttentionCase base;
  base.batch = r.has(j, "batch") ? r.integer(j["batch"], "batch") : 1;
  base.q_heads = r.integer(r.need(j, "", "q_heads"), "q_heads");
  base.kv_heads = r.integer(r.need(j, "", "kv_heads"), "kv_heads");
  base.head_dim = r.integer(r.need(j, "", "head_dim"), "head_dim");
  if (base.q_heads % base.kv_heads != 0)
    r.bad("kv_heads", fmt::format("a divisor of q_heads ({})", base.q_heads), j["kv_heads"]);
  const json& cases = r.array(r.need(j, "", "cases"), "cases");
  suite.entries = static_cast<int64_t>(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = Reader::at("cases", i);
    const json& e = cases[i];
    r.only_keys(e, path, {"name", "q_len", "kv_len", "causal"});
    AttentionCase a = base;
    const std::string name = r.string(r.need(e, path, "name"), path + ".name");
    a.q_len = r.integer(r.need(e, path, "q_len"), path + ".q_len");
    a.kv_len = r.integer(r.need(e, path, "kv_len"), path + ".kv_len");
    a.causal = r.has(e, "causal") ? r.choice<CausalMode>(e["causal"], path + ".causal",
                                                         {{"none", CausalMode::none},
                                                          {"top_left", CausalMode::top_left},
                                                          {"lower_right", CausalMode::lower_right}})
                                  : CausalMode::none;
    for (DType dtype : dtypes) {
      BenchCase c;
      c.name = fmt::format("{} {}", name, a.kv_len);
      c.shape = fmt::format("q[{},{},{},{}] kv[{},{},{},{}]{}", a.batch, a.q_heads, a.q_len, a.head_dim, a.batch,
                            a.kv_heads, a.kv_len, a.head_dim,
                            a.causal == CausalMode::none ? "" : a.causal == CausalMode::top_left ? " causal" : " causal-lr");
      c.dtype = dtype;
      c.params = a;
      suite.cases.push_back(std::move(c));
    }
  }
}

void parse_fp8(const Reader& r, const json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "out_dtype", "recipes", "m", "shapes"});
  for (size_t i = 0; i < dtypes.size(); ++i)
    if (!is_fp8(dtypes[i])) r.bad(Reader::at("dtypes", i), "an FP8 dtype (float8_e4m3fn, float8_e5m2)", j["dtypes"][i]);
  const DType out = r.has(j, "out_dtype") ? r.dtype(j["out_dtype"], "out_dtype") : DType::bf16;
  if (out != DType::bf16 && out != DType::f32 && out != DType::f16) r.bad("out_dtype", "bf16, f32 or f16", j["out_dtype"]);
  const json& recipes_json = r.array(r.need(j, "", "recipes"), "recipes");
  std::vector<Fp8Recipe> recipes;
  for (size_t i = 0; i < recipes_json.size(); ++i)
    recipes.push_back(r.choice<Fp8Recipe>(recipes_json[i], Reader::at("recipes", i),
                                          {{"tensorwise", Fp8Recipe::tensorwise}, {"rowwise", Fp8Recipe::rowwise},
                                           {"block_128x128", Fp8Recipe::block_128x128}}));
  const std::vector<int64_t> default_m = r.integers(r.need(j, "", "m"), "m");
  const json& shapes = r.array(r.need(j, "", "shapes"), "shapes");
  suite.entries = static_cast<int64_t>(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string path = Reader::at("shapes", i);
    const json& s = shapes[i];
    r.only_keys(s, path, {"n", "k", "model", "projection", "m"});
    const int64_t n = r.integer(r.need(s, path, "n"), path + ".n");
    const int64_t k = r.integer(r.need(s, path, "k"), path + ".k");
    r.string(r.need(s, path, "model"), path + ".model");
    r.string(r.need(s, path, "projection"), path + ".projection");
    const std::vector<int64_t> ms = r.has(s, "m") ? r.integers(s["m"], path + ".m") : default_m;
    for (DType dtype : dtypes)
      for (int64_t m : ms)
        for (Fp8Recipe recipe : recipes) {
          BenchCase c;
          c.name = describe_name(s);
          c.shape = fmt::format("a[{},{}] w[{},{}] {}", m, k, n, k, fp8_recipe_name(recipe));
          c.dtype = dtype;
          c.params = Fp8LinearCase{m, n, k, recipe, out};
          suite.cases.push_back(std::move(c));
        }
  }
}

std::string executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

std::string_view pad_layout_name(PadLayout layout) {
  switch (layout) {
    case PadLayout::contiguous: return "contiguous";
    case PadLayout::channels_last: return "channels_last";
    case PadLayout::sliced: return "sliced";
  }
  return "?";
}

std::string_view moe_routing_name(MoeRouting routing) {
  switch (routing) {
    case MoeRouting::even: return "even";
    case MoeRouting::skewed: return "skewed";
    case MoeRouting::empty: return "empty";
  }
  return "?";
}

std::string_view fp8_recipe_name(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::tensorwise: return "tensorwise";
    case Fp8Recipe::rowwise: return "rowwise";
    case Fp8Recipe::block_128x128: return "block_128x128";
    case Fp8Recipe::nvfp4: return "nvfp4";
    case Fp8Recipe::mxfp4: return "mxfp4";
  }
  return "?";
}

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

// A suite file of the `cases` form (row_ops, conv): the top-level fields, then fn(path, case) for each case.
template <class Fn>
void for_each_case(const Reader& r, const json& j, Suite& suite, Fn&& fn) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "cases"});
  const json& cases = r.array(r.need(j, "", "cases"), "cases");
  suite.entries = static_cast<int64_t>(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) fn(Reader::at("cases", i), cases[i]);
}

// Suites of row ops and products: a list of cases, each naming its call.
void parse_row_ops(const Reader& r, const json& j, Suite& suite, const std::vector<DType>& dtypes) {
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

// conv2d / conv3d rows: each case lists x and weight shapes (the rank picks the op) and the conv parameters.
void parse_conv(const Reader& r, const json& j, Suite& suite, const std::vector<DType>& dtypes) {
  for_each_case(r, j, suite, [&](const std::string& path, const json& e) {
    r.only_keys(e, path, {"name", "x", "weight", "stride", "padding", "dilation", "groups", "bias"});
    ConvCase c;
    const std::string name = r.string(r.need(e, path, "name"), path + ".name");
    c.x = r.integers(r.need(e, path, "x"), path + ".x");
    if (c.x.size() != 4 && c.x.size() != 5)
      r.bad(path + ".x", "[N, C, H, W] (conv2d) or [N, C, T, H, W] (conv3d)", e["x"]);
    c.weight = r.integers(r.need(e, path, "weight"), path + ".weight");
    if (c.weight.size() != c.x.size()) r.bad(path + ".weight", fmt::format("{} dims, as x", c.x.size()), e["weight"]);
    const size_t spatial = c.x.size() - 2;
    const auto param = [&](const char* key, int64_t min, int64_t fallback) {
      std::vector<int64_t> v = r.has(e, key) ? r.integers(e[key], path + "." + key, min) : std::vector<int64_t>{fallback};
      if (v.size() == 1) v.assign(spatial, v[0]);
      if (v.size() != spatial) r.bad(path + "." + key, fmt::format("1 or {} values", spatial), e[key]);
      return v;
    };
    c.stride = param("stride", 1, 1);
    c.padding = param("padding", 0, 0);
    c.dilation = param("dilation", 1, 1);
    c.groups = r.has(e, "groups") ? r.integer(e["groups"], path + ".groups") : 1;
    c.bias = r.has(e, "bias") ? r.boolean(e["bias"], path + ".bias") : true;
    if (c.weight[0] % c.groups != 0 || c.x[1] != c.weight[1] * c.groups)
      r.bad(path + ".weight", fmt::format("[O, C / groups, ...] with O a multiple of groups={} and C = {}", c.groups, c.x[1]),
            e["weight"]);
    for (size_t d = 0; d < spatial; ++d)
      if (c.x[2 + d] + 2 * c.padding[d] < c.dilation[d] * (c.weight[2 + d] - 1) + 1)
        r.bad(path + ".x", fmt::format("a padded size at dim {} that holds the dilated kernel", 2 + d), e["x"]);
    for (DType dtype : dtypes) {
      BenchCase b;
      b.name = name;
      b.op = c.x.size() == 4 ? "conv2d" : "conv3d";
      b.shape = fmt::format("x[{}] w[{}]{}{}{}{}{}", dims(c.x), dims(c.weight), c.bias ? " +bias" : "",
                            c.stride == std::vector<int64_t>(spatial, 1) ? "" : " stride " + dims(c.stride),
                            c.padding == std::vector<int64_t>(spatial, 0) ? "" : " pad " + dims(c.padding),
                            c.dilation == std::vector<int64_t>(spatial, 1) ? "" : " dil " + dims(c.dilation),
                            c.groups == 1 ? "" : fmt::format(" groups {}", c.groups));
      b.dtype = dtype;
      b.params = c;
      suite.cases.push_back(std::move(b));
    }
  });
}

double AttentionCase::attended_pairs() const {
  const int64_t L = q_len, S = kv_len;
  double pairs = 0;
  for (int64_t i = 0; i < L; ++i) {
    int64_t keys = S;
    if (causal == CausalMode::top_left) keys = std::min(S, i + 1);
    if (causal == CausalMode::lower_right) keys = std::clamp<int64_t>(i + S - L + 1, 0, S);
    pairs += static_cast<double>(keys);
  }
  return pairs;
}

Shape ConvCase::out_shape() const {
  Shape out = {x[0], weight[0]};
  for (size_t d = 0; d + 2 < x.size(); ++d)
    out.push_back((x[2 + d] + 2 * padding[d] - dilation[d] * (weight[2 + d] - 1) - 1) / stride[d] + 1);
  return out;
}

Suite parse_suite(std::string_view text, const std::string& source) {
  const Reader r(source);
  const json j = parse_bounded_json(text, "suite file " + source, "JSON");
  r.object(j, "");
  Suite suite;
  suite.name = r.string(r.need(j, "", "suite"), "suite");
  if (suite.name.empty()) r.bad("suite", "a non-empty name", j["suite"]);
  suite.op = r.string(r.need(j, "", "op"), "op");
  suite.description = r.has(j, "description") ? r.string(j["description"], "description") : std::string();
  if (r.has(j, "generated_by")) r.string(j["generated_by"], "generated_by");
  const std::vector<DType> dtypes = r.dtypes(r.need(j, "", "dtypes"), "dtypes");
  if (suite.op == "linear") {
    parse_linear(r, j, suite, dtypes);
  } else if (suite.op == "softmax") {
    parse_softmax(r, j, suite, dtypes);
  } else if (suite.op == "constant_pad_nd") {
    parse_pad(r, j, suite, dtypes);
  } else if (suite.op == "grouped_mm") {
    parse_moe(r, j, suite, dtypes);
  } else if (suite.op == "scaled_dot_product_attention") {
    parse_attention(r, j, suite, dtypes);
  } else if (suite.op == "scaled_mm") {
    parse_fp8(r, j, suite, dtypes);
  } else if (suite.op == "row_ops") {
    parse_row_ops(r, j, suite, dtypes);
  } else if (suite.op == "conv") {
    parse_conv(r, j, suite, dtypes);
  } else {
    r.bad("op", "one of linear, softmax, constant_pad_nd, grouped_mm, scaled_dot_product_attention, scaled_mm, row_ops, conv",
          j["op"]);
  }
  for (BenchCase& c : suite.cases) {
    c.suite = suite.name;
    if (c.op.empty()) c.op = suite.op;   // a suite's case may name another op (moe: moe_experts)
  }
  return suite;
}

std::vector<int64_t> moe_group_sizes(int64_t tokens, int64_t experts, int64_t top_k, MoeRouting routing) {
  if (tokens < 0 || experts < 1 || top_k < 1 || top_k > experts)
    fail<ValueError>("moe_group_sizes", "tokens, experts, top_k", "tokens >= 0 and 1 <= top_k <= experts",
                     fmt::format("{}, {}, {}", tokens, experts, top_k));
  std::vector<int64_t> sizes(static_cast<size_t>(experts), 0);
  const int64_t assignments = tokens * top_k;
  switch (routing) {
    case MoeRouting::even:
      for (int64_t e = 0; e < experts; ++e)
        sizes[static_cast<size_t>(e)] = assignments / experts + (e < assignments % experts ? 1 : 0);
      break;
    case MoeRouting::skewed:
      // D'Hondt: each assignment goes to the expert with the largest weight / (size + 1) that still has a
      // token left to take; ties to the lower index.
      for (int64_t a = 0; a < assignments; ++a) {
        int64_t best = -1;
        double best_quotient = -1.0;
        for (int64_t e = 0; e < experts; ++e) {
          if (sizes[static_cast<size_t>(e)] >= tokens) continue;
          const double q = 1.0 / static_cast<double>(e + 1) / static_cast<double>(sizes[static_cast<size_t>(e)] + 1);
          if (q > best_quotient) {
            best_quotient = q;
            best = e;
          }
        }
        ++sizes[static_cast<size_t>(best)];
      }
      break;
    case MoeRouting::empty:
      for (int64_t j = 0; j < top_k; ++j) sizes[static_cast<size_t>(j * experts / top_k)] = tokens;
      break;
  }
  return sizes;
}

}  // namespace fourfold
