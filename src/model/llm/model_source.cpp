#include "model/llm/model_source.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/available_memory.h"
#include "core/fnv1a.h"
#include "model/llm/model_folder.h"

namespace fourfold::model {
namespace {

std::string file_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return fmt::format("fnv1a64:{:016x}", fnv1a64(ss.str()));
}

// --weights copy reads every safetensors file into anonymous memory, which must fit beside everything else.
// Mapped weights (map, populate) are page cache: the kernel evicts and rereads pages when they do not all fit,
// which is slow but correct, so those are not refused here.
void require_memory_for_copy(const std::string& model_dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const std::filesystem::directory_entry& entry : std::filesystem::directory_iterator(model_dir, ec)) {
    std::error_code size_ec;
    if (entry.path().extension() != ".safetensors" || !entry.is_regular_file(size_ec)) continue;
    const uintmax_t size = entry.file_size(size_ec);
    if (!size_ec) bytes += static_cast<uint64_t>(size);
  }
  require_available_memory(bytes, "model " + model_dir, "its safetensors files read into memory (--weights copy)",
                           "--weights map keeps them in the page cache instead");
}

}  // namespace

std::string ModelSource::description() const {
  const ModelConfig& c = config;
  std::string shape = fmt::format("{}, {} layers, hidden {}, {} q / {} kv heads of {}, vocab {}", c.model_type,
                                  c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.num_key_value_heads,
                                  c.head_dim, c.vocab_size);
  if (c.num_experts > 0)
    shape += fmt::format(", {} experts / {} active of width {}", c.num_experts, c.num_experts_per_tok,
                         c.moe_intermediate_size);
  return fmt::format("{} {} ({})", from_files ? "model" : "preset", name, shape);
}

ModelSource open_model(const std::string& model_dir, const std::string& preset, uint64_t seed,
                       std::optional<int64_t> layers, WeightResidency residency, const FolderProgress& progress) {
  ModelSource s;
  if (!model_dir.empty()) {
    if (residency == WeightResidency::copy) require_memory_for_copy(model_dir);
    const auto start = std::chrono::steady_clock::now();
    LoadedModel loaded = load_model_folder(model_dir, residency, progress);
    s.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    s.residency = residency;
    s.file_copy_bytes = loaded.file_copy_bytes;
    s.name = model_dir;
    s.from_files = true;
    s.config_hash = file_hash(model_dir + "/config.json");
    s.config = std::move(loaded.config);
    s.weights = std::move(loaded.weights);
    s.mapped_bytes = loaded.mapped_bytes;
    s.generation = std::move(loaded.generation);
    return s;
  }
  s.name = preset.empty() ? "tiny-moe" : preset;
  s.config = preset_config(s.name, layers);
  require_memory_for_preset(s.name, s.config, DType::bf16);
  s.weights = synthetic_weights(s.config, DType::bf16, seed);
  return s;
}

}  // namespace fourfold::model
