// Loading and writing Hugging Face model folders, checked tensor by tensor against the config's layout.
#include "model/llm/model_folder.h"

#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/formats/folder_files.h"
#include "model/formats/safetensors.h"
#include "model/llm/fp4_checkpoint.h"
#include "model/llm/hybrid_checkpoint.h"
#include "model/llm/weight_layout.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;

constexpr const char* kConfigFile = "config.json";
constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";
constexpr const char* kGenerationConfigFile = "generation_config.json";
const std::regex kShardName(R"(model-\d{5}-of-\d{5}\.safetensors)");

void write_text(const fs::path& path, const std::string& text) { write_file_atomically(path, text); }

std::string describe(const Shape& shape, DType dtype) {
  return fmt::format("{} {}", dtype_name(dtype), shape_string(shape));
}

// The groups tensors are written in (a group is never split across shards): weight_layout order, each
// projection with its scale, and each MoE layer's experts regrouped per projection in expert order.
// An FP4 projection and its scales, written together.
std::vector<std::string> fp4_group(const ModelConfig& config, const std::string& weight) {
  std::vector<std::string> group = {weight, fp4_scale_name(weight)};
  if (config.fp4->nv) group.push_back(fp4_global_name(weight));
  return group;
}

std::vector<std::vector<std::string>> write_groups(const ModelConfig& config) {
  std::vector<std::vector<std::string>> groups;
  const bool fp8 = config.quantization.has_value();
  for (const WeightSpec& spec : weight_layout(config)) {
    if (spec.name.find(".mlp.experts.") != std::string::npos) continue;   // grouped after the router below
    if (stored_as_fp8(config, spec))
      groups.push_back({spec.name, fp8_scale_name(spec.name)});
    else if (stored_as_fp4(config, spec))
      groups.push_back(fp4_group(config, spec.name));
    else
      groups.push_back({spec.name});
    if (spec.role == WeightRole::router) {
      for (const char* projection : {"gate_proj", "up_proj", "down_proj"}) {
        std::vector<std::string> experts, scales;
        for (int64_t e = 0; e < config.num_experts; ++e) {
          experts.push_back(expert_weight(spec.layer, e, projection));
          const WeightSpec expert{experts.back(), {}, WeightRole::projection, 0, spec.layer};
          if (stored_as_fp4(config, expert)) {
            const std::vector<std::string> companions = fp4_group(config, experts.back());
            scales.insert(scales.end(), companions.begin() + 1, companions.end());
          } else {
            scales.push_back(fp8_scale_name(experts.back()));
          }
        }
        groups.push_back(experts);
        if (fp8 || config.fp4) groups.push_back(scales);
      }
    }
  }
  return groups;
}

bool is_weight_file_name(const std::string& name) {
  return name == kSingleFile || name == kIndexFile || std::regex_match(name, kShardName);
}

void remove_earlier_checkpoint(const fs::path& dir) {
  for (const fs::directory_entry& entry : fs::directory_iterator(dir))
    if (is_weight_file_name(entry.path().filename().string())) fs::remove(entry.path());
}

}  // namespace

bool is_checkpoint_file_name(const std::string& name) { return name == kConfigFile || is_weight_file_name(name); }

std::map<std::string, ExpectedTensor> expected_tensors(const ModelConfig& config) {
  std::map<std::string, ExpectedTensor> out;
  for (const WeightSpec& spec : weight_layout(config)) {
    if (stored_as_fp8(config, spec)) {
      out[spec.name] = {spec.shape, DType::f8_e4m3fn};
      out[fp8_scale_name(spec.name)] = {fp8_scale_shape(config, spec.shape), DType::f32};
    } else if (stored_as_fp4(config, spec)) {
      const int64_t rows = spec.shape[0], cols = spec.shape[1];
      out[spec.name] = {{rows, cols / 2}, DType::f4_e2m1fn_x2};
      out[fp4_scale_name(spec.name)] = {{rows, cols / config.fp4->block()},
                                        config.fp4->nv ? DType::f8_e4m3fn : DType::f8_e8m0fnu};
      if (config.fp4->nv) out[fp4_global_name(spec.name)] = {{1}, DType::f32};
    } else {
      const bool small = spec.role == WeightRole::norm || spec.role == WeightRole::conv ||
                         spec.role == WeightRole::decay || spec.role == WeightRole::gate_linear;
      out[spec.name] = {spec.shape, config.torch_dtype, config.is_hybrid() && small};
    }
  }
  return out;
}

void check_weights(const ModelConfig& config, const TensorMap& weights, const std::string& where,
                   const std::map<std::string, std::string>& file_of) {
  const auto file = [&](const std::string& name) {
    const auto it = file_of.find(name);
    return it == file_of.end() ? where : (fs::path(where) / it->second).string();
  };
  const std::map<std::string, ExpectedTensor> expected = expected_tensors(config);
  for (const auto& [name, e] : expected) {
    const auto it = weights.find(name);
    if (it == weights.end())
      fail<FormatError>(where, "tensor " + name, describe(e.shape, e.dtype), "no such tensor (missing)");
    const DType d = it->second.dtype();
    const bool dtype_ok = d == e.dtype || (e.any_float && (d == DType::bf16 || d == DType::f16 || d == DType::f32));
    if (it->second.shape() != e.shape || !dtype_ok)
      fail<FormatError>(file(name), "tensor " + name, describe(e.shape, e.dtype),
                        describe(it->second.shape(), it->second.dtype()));
  }
  for (const auto& [name, t] : weights)
    if (!expected.count(name))
      fail<FormatError>(file(name), "tensor " + name,
                        fmt::format("only the tensors of a {} checkpoint of this config", config.model_type),
                        "an extra tensor " + describe(t.shape(), t.dtype()));
}

LoadedModel load_model_folder(const fs::path& dir, WeightResidency residency, const FolderProgress& progress) {
  LoadedModel m;
  const fs::path config_path = dir / kConfigFile;
  m.config = parse_model_config(read_folder_json(config_path), config_path.string());

  const WeightFiles listing = list_weight_files(dir, kSingleFile, kIndexFile);
  const std::vector<std::string>& files = listing.files;

  uint64_t total = 0, done = 0;
  for (const std::string& file : files) {
    std::error_code error;   // a file that cannot be sized adds nothing here; reading it says why it failed
    const uintmax_t size = fs::file_size(dir / file, error);
    if (!error) total += size;
  }
  const LoadProgress bytes_read = [&](uint64_t bytes) {
    done += bytes;
    if (progress) progress(done, total);
  };
  for (const std::string& file : files) {
    SafetensorsFile f = read_safetensors(dir / file, residency, progress ? bytes_read : LoadProgress{});
    m.mapped_bytes += f.mapped_bytes;
    m.file_copy_bytes += f.copied_bytes;
    for (auto& [name, reason] : f.copied) m.copied[name] = reason;
    for (auto& [name, tensor] : f.tensors) {
      check_listed(listing, dir, file, name);
      m.file_of[name] = file;
      m.weights.emplace(name, std::move(tensor));
    }
  }
  check_index_complete(listing, dir, [&](const std::string& name) { return m.weights.count(name) > 0; });
  if (m.config.fp4) read_compressed_tensors_fp4(m.config, m.weights, m.file_of, dir.string());
  if (m.config.is_hybrid()) normalize_hybrid_checkpoint(m.config, m.weights, m.file_of, m.copied, dir.string());
  // Before anything is built entry by entry from the config, it must describe no more than the files can hold (a
  // tensor or two short still reaches check_weights, which names the missing one).
  const WeightTotals implied = weight_totals(m.config, config_path.string());
  const auto tensors = static_cast<int64_t>(m.weights.size());
  const uint64_t file_bytes = m.mapped_bytes + m.file_copy_bytes;
  // (FP4 weights hold two elements a byte.)
  const int64_t implied_bytes = m.config.fp4 ? implied.elements / 2 : implied.elements;
  if (implied.tensors > 2 * tensors + 16 || implied_bytes > static_cast<int64_t>(file_bytes))
    fail<FormatError>(config_path.string(), "the sizes (num_hidden_layers, hidden_size, experts, vocab_size ...)",
                      fmt::format("a model that fits in the folder's {} tensors of {} bytes", m.weights.size(),
                                  file_bytes),
                      fmt::format("sizes that imply {} tensors of {} elements", implied.tensors, implied.elements));
  if (!m.config.torch_dtype_stated) {
    // transformers then loads the weights as stored; the embedding's dtype is the checkpoint's.
    const auto embed = m.weights.find("model.embed_tokens.weight");
    if (embed != m.weights.end() && !is_fp8(embed->second.dtype())) m.config.torch_dtype = embed->second.dtype();
    m.config.defaults_taken.push_back(fmt::format("dtype = {} (config.json states none: model.embed_tokens.weight's)",
                                                  dtype_name(m.config.torch_dtype)));
  }
  check_weights(m.config, m.weights, dir.string(), m.file_of);
  if (fs::exists(dir / kGenerationConfigFile))
    m.generation = parse_generation_config(read_folder_json(dir / kGenerationConfigFile),
                                           (dir / kGenerationConfigFile).string());
  return m;
}

namespace {

// The writer of both: bytes_of(name) sizes the shards (a tensor's own bytes where they are at hand, else the
// expected ones).
uint64_t write_folder(const fs::path& dir, const ModelConfig& config, uint64_t max_shard_bytes,
                      const std::function<TensorMap(int64_t layer)>& weights_of,
                      const std::function<uint64_t(const std::string&)>& bytes_of) {
  const std::map<std::string, ExpectedTensor> expected = expected_tensors(config);
  // Each tensor's layer: its own, or (a scale) its weight's.
  std::map<std::string, int64_t> layer_of;
  for (const WeightSpec& spec : weight_layout(config)) {
    layer_of[spec.name] = spec.layer;
    for (const std::string& companion : {fp8_scale_name(spec.name), fp4_scale_name(spec.name), fp4_global_name(spec.name)})
      layer_of[companion] = spec.layer;
  }
  // Shards: whole groups, a new shard when the next group would pass the limit.
  std::vector<std::vector<std::string>> shards(1);
  uint64_t shard_bytes = 0, total_bytes = 0;
  for (const std::vector<std::string>& group : write_groups(config)) {
    uint64_t bytes = 0;
    for (const std::string& name : group) bytes += bytes_of(name);
    if (shard_bytes > 0 && shard_bytes + bytes > max_shard_bytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().insert(shards.back().end(), group.begin(), group.end());
    shard_bytes += bytes;
    total_bytes += bytes;
  }

  fs::create_directories(dir);
  remove_earlier_checkpoint(dir);
  const std::string config_text = model_config_to_json(config);
  write_text(dir / kConfigFile, config_text);
  uint64_t written = config_text.size();
  const std::map<std::string, std::string> metadata = {{"format", "pt"}};   // transformers requires it
  const TensorMap outside = weights_of(-1);
  TensorMap layer;
  int64_t layer_index = -1;
  nlohmann::ordered_json index;
  index["metadata"] = {{"total_size", total_bytes}};
  index["weight_map"] = nlohmann::ordered_json::object();
  for (size_t i = 0; i < shards.size(); ++i) {
    std::vector<std::pair<std::string, Tensor>> entries;
    for (const std::string& name : shards[i]) {
      const int64_t l = layer_of.at(name);
      if (l >= 0 && l != layer_index) {
        layer = TensorMap();   // the previous layer's tensors live on only in this shard's entries
        layer = weights_of(l);
        layer_index = l;
      }
      const TensorMap& part = l < 0 ? outside : layer;
      const auto it = part.find(name);
      const ExpectedTensor& e = expected.at(name);
      if (it == part.end()) fail<FormatError>("write_model_folder", "tensor " + name, describe(e.shape, e.dtype), "missing");
      if (it->second.shape() != e.shape || it->second.dtype() != e.dtype)
        if (!(e.any_float && is_floating(it->second.dtype()) && it->second.shape() == e.shape))
          fail<FormatError>("write_model_folder", "tensor " + name, describe(e.shape, e.dtype),
                            describe(it->second.shape(), it->second.dtype()));
      entries.push_back(config.fp4 ? compressed_tensors_entry(name, it->second)
                                   : std::pair<std::string, Tensor>{name, it->second});
    }
    if (shards.size() == 1) {
      write_safetensors(dir / kSingleFile, entries, metadata);
      return written + fs::file_size(dir / kSingleFile);
    }
    const std::string file = fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards.size());
    write_safetensors(dir / file, entries, metadata);
    written += fs::file_size(dir / file);
    for (const auto& [name, tensor] : entries) index["weight_map"][name] = file;
  }
  const std::string index_text = index.dump(2) + "\n";
  write_text(dir / kIndexFile, index_text);
  return written + index_text.size();
}

}  // namespace

uint64_t write_model_folder(const fs::path& dir, const ModelConfig& config, const TensorMap& weights,
                            uint64_t max_shard_bytes) {
  check_weights(config, weights, "write_model_folder");
  return write_folder(dir, config, max_shard_bytes, [&](int64_t) { return weights; },
                      [&](const std::string& name) { return static_cast<uint64_t>(weights.at(name).nbytes()); });
}

uint64_t write_model_folder_streamed(const fs::path& dir, const ModelConfig& config, uint64_t max_shard_bytes,
                                     const std::function<TensorMap(int64_t layer)>& weights_of) {
  const std::map<std::string, ExpectedTensor> expected = expected_tensors(config);
  return write_folder(dir, config, max_shard_bytes, weights_of, [&](const std::string& name) {
    const ExpectedTensor& e = expected.at(name);
    return static_cast<uint64_t>(shape_numel(e.shape)) * dtype_size(e.dtype);
  });
}

Tensor stacked_experts(const ModelConfig& config, const TensorMap& weights, int64_t layer,
                       const std::string& projection, const std::string& suffix) {
  std::vector<Tensor> parts;
  for (int64_t e = 0; e < config.num_experts; ++e) {
    std::string name = expert_weight(layer, e, projection);
    name = name.substr(0, name.size() - 6) + suffix;   // "...weight" -> "...<suffix>"
    const auto it = weights.find(name);
    if (it == weights.end()) fail<ValueError>("stacked_experts", "tensor " + name, "present", "missing");
    parts.push_back(it->second);
  }
  if (auto view = stacked_view(parts)) return *view;
  Shape shape{config.num_experts};
  shape.insert(shape.end(), parts[0].shape().begin(), parts[0].shape().end());
  Tensor out = Tensor::empty(shape, parts[0].dtype());
  for (int64_t e = 0; e < config.num_experts; ++e) out.select(0, e).copy_from(parts[e]);
  return out;
}

}  // namespace fourfold::model
