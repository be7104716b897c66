// The layer order of docs/architecture.md as code: where a source file sits (layer, and part of a layer that
// has ordered subfolders), and whether one `#include "..."` goes against the order. Kept apart from the test
// so that the checker itself is tested on small in-memory examples.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace fourfold::architecture {

// Data flows one way: tools -> check -> model -> ops -> backends -> memory -> core.
inline const std::vector<std::string>& layers_bottom_up() {
  static const std::vector<std::string> order = {"core", "memory", "backends", "ops", "model", "check", "tools"};
  return order;
}

inline int layer_rank(const std::string& layer) {
  const auto& order = layers_bottom_up();
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] == layer) return static_cast<int>(i);
  return -1;
}

// Public headers belong to the layer that implements them.
inline const std::map<std::string, std::string>& public_header_layers() {
  static const std::map<std::string, std::string> layers = {
      {"tensor.h", "core"},     {"dtype.h", "core"},          {"device.h", "core"},     {"errors.h", "core"},
      {"parallel.h", "core"},   {"allocator.h", "core"},      {"memory_probe.h", "memory"},
      {"op_modes.h", "backends"}, {"ops.h", "ops"},           {"policy.h", "ops"},      {"profile.h", "ops"},
      {"moe.h", "ops"}};
  return layers;
}

// Within a layer, the subfolders that have an order: a part may include the parts listed for it (and
// itself). backends: "" is the folder's root, the interface every tier implements (op list, op arguments,
// kernel table); model: every source file sits in one of the four subfolders.
inline const std::map<std::string, std::map<std::string, std::set<std::string>>>& part_rules() {
  static const std::map<std::string, std::map<std::string, std::set<std::string>>> rules = {
      {"backends",
       {{"", {""}}, {"reference", {""}}, {"cpu", {""}}, {"generic", {"", "cpu"}}}},
      {"model",
       {{"formats", {}}, {"tokenizer", {"formats"}}, {"llm", {"formats", "tokenizer"}}, {"vae", {"formats"}}}}};
  return rules;
}

// The generic tier composes ops from primitives built on the dedicated tier's ISA machinery; it reaches cpu/
// through these headers only (docs/architecture.md, "Inside backends").
inline const std::set<std::string>& cpu_headers_for_generic() {
  static const std::set<std::string> headers = {"backends/cpu/isa.h", "backends/cpu/gemm.h",
                                                "backends/cpu/float_rows.h", "backends/cpu/kernel_types.h",
                                                "backends/cpu/kernels/kernels.h",
                                                "backends/cpu/kernels/vec.h"};
  return headers;
}

// Headers generated into the build folder, not in the tree (the registries: cmake/registry.cmake).
inline const std::set<std::string>& generated_headers() {
  static const std::set<std::string> headers = {"git_commit.h", "registry_generic.h", "registry_cpu.h",
                                                 "registry_op_cases.h"};
  return headers;
}

struct Place {
  std::string layer;   // one of layers_bottom_up(); empty when the path is in none
  std::string part;    // subfolder for layers with part_rules(); "" for a file at the layer's root
  std::string name() const { return part.empty() ? layer : layer + "/" + part; }
};

inline bool has_parts(const std::string& layer) { return part_rules().count(layer) != 0; }

// `path`: relative to the source root with '/' separators: "src/ops/softmax.cpp", "tools/fourfold/main.cpp",
// "include/fourfold/tensor.h" (a public header is in the layer that implements it).
inline Place place_of_source(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream in(path);
  for (std::string piece; std::getline(in, piece, '/');) parts.push_back(piece);
  if (parts.size() >= 2 && parts[0] == "tools") return {"tools", ""};
  if (parts.size() == 3 && parts[0] == "include" && parts[1] == "fourfold") {
    const auto found = public_header_layers().find(parts[2]);
    return found == public_header_layers().end() ? Place{} : Place{found->second, ""};
  }
  if (parts.size() >= 3 && parts[0] == "src" && layer_rank(parts[1]) >= 0) {
    Place p{parts[1], ""};
    if (has_parts(p.layer) && parts.size() >= 4) p.part = parts[2];
    return p;
  }
  return {};
}

// The place an include names, `target` as written between the quotes (include paths are src/ and include/).
inline std::optional<Place> place_of_include(const std::string& target) {
  const auto slash = target.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::string first = target.substr(0, slash);
  if (first == "fourfold") {
    const Place p = place_of_source("include/" + target);
    if (p.layer.empty()) return std::nullopt;
    return p;
  }
  if (layer_rank(first) < 0 || first == "tools") return std::nullopt;
  return place_of_source("src/" + target);
}

// Why `from` may not include `target` (which resolves to `to`), or nothing when it may.
inline std::optional<std::string> forbidden(const Place& from, const Place& to, const std::string& target) {
  if (layer_rank(to.layer) > layer_rank(from.layer))
    return fmt::format("{} may not include {}: {} sits above {}", from.name(), to.name(), to.layer, from.layer);
  if (to.layer == "backends" && from.layer != "backends" && from.layer != "ops")
    return fmt::format("{} may not include {}: the backends are reached only through ops", from.name(), to.name());
  if (to.layer != from.layer || !has_parts(from.layer) || to.part == from.part) return std::nullopt;
  const auto& rules = part_rules().at(from.layer);
  const auto allowed = rules.find(from.part);
  if (allowed == rules.end())
    return fmt::format("{} is not one of {}'s subfolders (docs/architecture.md lists them)", from.name(), from.layer);
  if (allowed->second.count(to.part) == 0)
    return fmt::format("{} may not include {}: sibling folders in {} go one way", from.name(), to.name(), from.layer);
  if (from.name() == "backends/generic" && to.part == "cpu" && cpu_headers_for_generic().count(target) == 0)
    return fmt::format("{} may not include {}: generic reaches cpu only through its shared headers ({})", from.name(),
                       target, fmt::join(cpu_headers_for_generic(), ", "));
  return std::nullopt;
}

struct Violation {
  std::string file;
  int line = 0;
  std::string message;
  std::string describe() const { return fmt::format("{}:{}: {}", file, line, message); }
};

// Every `#include "..."` of one file against the order. `path` as for place_of_source; `exists_beside(name)`
// answers whether a bare include names a file in the including file's folder.
template <class ExistsBeside>
std::vector<Violation> check_includes(const std::string& path, const std::string& text, ExistsBeside exists_beside) {
  std::vector<Violation> found;
  const Place from = place_of_source(path);
  if (from.layer.empty()) return {{path, 0, "is in no layer of docs/architecture.md"}};
  std::stringstream in(text);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.compare(start, 10, "#include \"") != 0) continue;
    const auto open = start + 10, close = line.find('"', open);
    if (close == std::string::npos) continue;
    const std::string target = line.substr(open, close - open);
    if (target.find('/') == std::string::npos) {
      if (exists_beside(target) || generated_headers().count(target) != 0) continue;
      found.push_back({path, line_number, fmt::format("includes \"{}\", which is not beside it", target)});
      continue;
    }
    const std::optional<Place> to = place_of_include(target);
    if (!to) {
      found.push_back({path, line_number,
                       fmt::format("includes \"{}\", which is in no layer (a public header needs its layer in "
                                   "tests/architecture/include_rules.h)",
                                   target)});
      continue;
    }
    if (auto why = forbidden(from, *to, target)) found.push_back({path, line_number, *why});
  }
  return found;
}

// <root>/tests/data -> <root>.
inline std::filesystem::path source_root(const std::filesystem::path& test_data_dir) {
  return test_data_dir.parent_path().parent_path();
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every .h/.cpp under root/src, root/tools and root/include.
inline std::vector<Violation> check_tree(const std::filesystem::path& root) {
  std::vector<Violation> found;
  for (const char* top : {"src", "tools", "include"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / top)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      const std::string relative = entry.path().lexically_relative(root).generic_string();
      const auto folder = entry.path().parent_path();
      auto more = check_includes(relative, read_text(entry.path()),
                                 [&](const std::string& name) { return std::filesystem::exists(folder / name); });
      found.insert(found.end(), more.begin(), more.end());
    }
  }
  return found;
}

}  // namespace fourfold::architecture
