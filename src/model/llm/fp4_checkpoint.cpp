// The renaming between compressed-tensors' FP4 tensors and the engine's names, and which modules are FP4.
#include "model/llm/fp4_checkpoint.h"

#include <regex>
#include <set>

#include <fmt/format.h>

#include "fourfold/errors.h"

namespace fourfold::model {
namespace {

constexpr const char* kPacked = ".weight_packed";
constexpr const char* kScale = ".weight_scale";
constexpr const char* kGlobal = ".weight_global_scale";
constexpr const char* kInputGlobal = ".input_global_scale";
constexpr const char* kZeroPoint = ".weight_zero_point";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// compressed-tensors' matching of a target or ignore entry against a module name.
bool matches(const std::string& entry, const std::string& module) {
  if (entry == "Linear") return true;
  if (entry.rfind("re:", 0) == 0) {
    try {
      return std::regex_match(module, std::regex(entry.substr(3)));
    } catch (const std::regex_error&) {
      return false;
    }
  }
  return entry == module;
}

bool any_match(const std::vector<std::string>& entries, const std::vector<std::string>& names) {
  for (const std::string& e : entries)
    for (const std::string& n : names)
      if (matches(e, n)) return true;
  return false;
}

}  // namespace

bool stored_as_fp4(const ModelConfig& config, const WeightSpec& spec) {
  if (!config.fp4 || (spec.role != WeightRole::projection && spec.role != WeightRole::lm_head)) return false;
  const std::string module = spec.name.substr(0, spec.name.rfind('.'));
  std::vector<std::string> names = {module};
  if (!config.wrapper.empty() && module.rfind("model.", 0) == 0) names.push_back(config.weight_prefix() + module.substr(6));
  return any_match(config.fp4->targets, names) && !any_match(config.fp4->ignore, names);
}

std::string fp4_scale_name(const std::string& weight_name) { return weight_name + "_fp4_scale"; }
std::string fp4_global_name(const std::string& weight_name) { return weight_name + "_fp4_global"; }

void read_compressed_tensors_fp4(const ModelConfig& config, TensorMap& weights,
                                 std::map<std::string, std::string>& file_of, const std::string& where) {
  std::vector<std::string> names;
  std::set<std::string> packed;   // "X.weight" of every X.weight_packed: their X.weight_scale are block scales
  for (const auto& [name, t] : weights) {
    names.push_back(name);
    if (ends_with(name, kPacked)) packed.insert(name.substr(0, name.size() - 7));
  }
  const auto rename = [&](const std::string& from, const std::string& to, const Tensor& t) {
    weights.erase(from);
    weights[to] = t;
    if (auto it = file_of.find(from); it != file_of.end()) {
      file_of[to] = it->second;
      file_of.erase(it);
    }
  };
  for (const std::string& name : names) {
    const auto it = weights.find(name);
    const Tensor t = it->second;
    if (ends_with(name, kInputGlobal)) {
      weights.erase(it);
      file_of.erase(name);
    } else if (ends_with(name, kZeroPoint)) {
      fail<FormatError>(where, "tensor " + name, "no zero point (FP4 weights are symmetric)", "one");
    } else if (ends_with(name, kPacked)) {
      if (t.dtype() != DType::u8) fail<FormatError>(where, "tensor " + name, "dtype uint8 (packed FP4 pairs)", std::string(dtype_name(t.dtype())));
      rename(name, name.substr(0, name.size() - 7), t.view_dtype(DType::f4_e2m1fn_x2));   // "X.weight_packed" -> "X.weight"
    } else if (ends_with(name, kScale) && packed.count(name.substr(0, name.size() - 6))) {
      const std::string weight = name.substr(0, name.size() - 6);   // "X.weight"
      const DType want = config.fp4->nv ? DType::f8_e4m3fn : DType::f8_e8m0fnu;
      const bool ok = t.dtype() == want || (!config.fp4->nv && t.dtype() == DType::u8);
      if (!ok)
        fail<FormatError>(where, "tensor " + name,
                          config.fp4->nv ? "dtype float8_e4m3fn (NVFP4 block scales)" : "dtype uint8 or float8_e8m0fnu (MXFP4 block scales)",
                          std::string(dtype_name(t.dtype())));
      rename(name, fp4_scale_name(weight), t.dtype() == want ? t : t.view_dtype(want));
    } else if (ends_with(name, kGlobal)) {
      const std::string weight = name.substr(0, name.size() - 13);   // "X.weight"
      if (t.dtype() != DType::f32 || t.numel() != 1)
        fail<FormatError>(where, "tensor " + name, "float32 [1] (the NVFP4 global scale)", t.describe());
      rename(name, fp4_global_name(weight), t);
    }
  }
}

std::pair<std::string, Tensor> compressed_tensors_entry(const std::string& name, const Tensor& tensor) {
  if (tensor.dtype() == DType::f4_e2m1fn_x2) return {name + "_packed", tensor.view_dtype(DType::u8)};
  if (ends_with(name, "_fp4_scale")) {
    const std::string weight = name.substr(0, name.size() - 10);
    return {weight + "_scale", tensor.dtype() == DType::f8_e8m0fnu ? tensor.view_dtype(DType::u8) : tensor};
  }
  if (ends_with(name, "_fp4_global")) return {name.substr(0, name.size() - 11) + "_global_scale", tensor};
  return {name, tensor};
}

Tensor fp4_global_multiplier(const Tensor& stored_divisor) {
  std::vector<double> v = stored_divisor.to_vector();
  for (double& x : v) x = static_cast<double>(1.0f / static_cast<float>(x));
  return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}, DType::f32);
}

}  // namespace fourfold::model
