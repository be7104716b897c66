// The files of a Hugging Face / diffusers model folder that fourfold reads before any tensor: config.json (and
// other small JSON beside the weights), and which safetensors files hold the weights - one file, or the shards a
// *.safetensors.index.json names in its weight_map. Shared by the LLM loader and the VAE loader so both refuse
// the same things the same way: anything but a regular file (a FIFO would block, /dev/zero would never end), a
// JSON file past a size cap, an index naming a file outside the folder. Depends only on core/ so that a fuzz
// target can be built from few sources.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fourfold::model {

// The largest config.json / index.json read: the largest real index (a 671B MoE's ~92,000 tensors) is ~10 MB.
inline constexpr uint64_t kMaxFolderJsonBytes = uint64_t(64) << 20;

// The text of a small JSON file of the folder; FormatError naming the path when it is missing, not a regular
// file (FIFO, device, a symlink to one) or larger than kMaxFolderJsonBytes.
std::string read_folder_json(const std::filesystem::path& path);

// An index's {"weight_map": {tensor: file}} from its text; `where` names it in errors. Every file must be a plain
// name inside the folder: not empty, no '/', not "." or "..", no NUL (FormatError naming the tensor).
std::map<std::string, std::string> parse_weight_map(std::string_view text, const std::string& where);

// Where a folder's weights are: `index` when it exists (as diffusers and fourfold's writer shard), else `single`.
struct WeightFiles {
  std::vector<std::string> files;                  // names within the folder, each once, in name order
  std::map<std::string, std::string> weight_map;   // tensor -> file; empty for one single file
  std::string index;                               // the index's name when there is one, else empty
};
// FormatError naming the folder when it holds neither.
WeightFiles list_weight_files(const std::filesystem::path& dir, const std::string& single, const std::string& index);

// FormatError naming dir/file and the tensor unless the index (if any) lists `tensor` under `file`: a tensor that
// is in a shard but not listed, or listed under another shard (duplicates across shards end here).
void check_listed(const WeightFiles& listing, const std::filesystem::path& dir, const std::string& file,
                  const std::string& tensor);
// FormatError naming the listed file and the tensor for the first tensor the index lists that present() denies.
void check_index_complete(const WeightFiles& listing, const std::filesystem::path& dir,
                          const std::function<bool(const std::string&)>& present);

}  // namespace fourfold::model
