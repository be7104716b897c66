#include "model/formats/folder_files.h"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/formats/bounded_json.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

std::string quoted(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::string read_folder_json(const fs::path& path) { return read_regular_file(path, kMaxFolderJsonBytes); }

std::map<std::string, std::string> parse_weight_map(std::string_view text, const std::string& where) {
  const json root = parse_bounded_json(text, where, "index");
  if (!root.is_object() || !root.contains("weight_map") || !root["weight_map"].is_object())
    fail<FormatError>(where, "weight_map", "an object of tensor name to file name", "none");
  std::map<std::string, std::string> map;
  for (const auto& [tensor, file] : root["weight_map"].items()) {
    if (!file.is_string() || !plain_file_name(file.get<std::string>()))
      fail<FormatError>(where, "tensor " + tensor, "a file name in this folder (no '/', not '.' or '..')",
                        quoted(file));
    map[tensor] = file.get<std::string>();
  }
  return map;
}

WeightFiles list_weight_files(const fs::path& dir, const std::string& single, const std::string& index) {
  WeightFiles out;
  // symlink_status: an index that is a dangling link or a FIFO is still "there" and read_folder_json says why.
  std::error_code error;
  if (fs::exists(fs::symlink_status(dir / index, error))) {
    out.index = index;
    out.weight_map = parse_weight_map(read_folder_json(dir / index), (dir / index).string());
    std::set<std::string> unique;
    for (const auto& [tensor, file] : out.weight_map) unique.insert(file);
    out.files.assign(unique.begin(), unique.end());
  } else if (fs::exists(fs::symlink_status(dir / single, error))) {
    out.files.push_back(single);
  } else {
    fail<FormatError>(dir.string(), "weights", fmt::format("{} or {} with its shards", single, index), "neither");
  }
  return out;
}

void check_listed(const WeightFiles& listing, const fs::path& dir, const std::string& file, const std::string& tensor) {
  if (listing.index.empty()) return;
  const auto listed = listing.weight_map.find(tensor);
  if (listed == listing.weight_map.end() || listed->second != file)
    fail<FormatError>((dir / file).string(), "tensor " + tensor,
                      fmt::format("a tensor {} lists in this file", listing.index),
                      listed == listing.weight_map.end() ? "it not listed" : "it listed under " + listed->second);
}

void check_index_complete(const WeightFiles& listing, const fs::path& dir,
                          const std::function<bool(const std::string&)>& present) {
  for (const auto& [tensor, file] : listing.weight_map)
    if (!present(tensor))
      fail<FormatError>((dir / file).string(), "tensor " + tensor,
                        fmt::format("present ({} lists it)", listing.index), "no such tensor in the file");
}

}  // namespace fourfold::model
