#include "model/llm/compute_dtypes.h"

#include <fmt/format.h>

#include "fourfold/errors.h"

namespace fourfold::model {
namespace {

constexpr std::string_view kAuto = "auto";

// bf16 or f32 from an option's text; anything else is refused naming the option.
DType explicit_dtype(std::string_view text, const std::string& where, const char* option) {
  DType d = DType::f64;
  try {
    d = parse_dtype(text);
  } catch (const DTypeError&) {
  }
  if (d != DType::f32 && d != DType::bf16) fail<ValueError>(where, option, "auto, bf16 or f32", std::string(text));
  return d;
}

}  // namespace

DType checkpoint_activation(const ModelConfig& config) {
  if (config.quantization || config.fp4) return DType::bf16;
  return config.torch_dtype == DType::bf16 ? DType::bf16 : DType::f32;
}

void check_dtype_options(std::string_view activation, std::string_view kv_cache, const std::string& where) {
  if (activation != kAuto) explicit_dtype(activation, where, "--dtype");
  if (kv_cache != kAuto) explicit_dtype(kv_cache, where, "--kv-dtype");
}

ComputeDtypes resolve_compute_dtypes(std::string_view activation, std::string_view kv_cache, const ModelConfig& config,
                                     const std::string& where) {
  ComputeDtypes d;
  if (activation == kAuto) {
    d.activation = checkpoint_activation(config);
    const std::string quantized = config.quantization ? "FP8" : config.fp4 ? (config.fp4->nv ? "NVFP4" : "MXFP4") : "";
    const std::string model = !quantized.empty() ? quantized + ", " + std::string(dtype_name(config.torch_dtype)) + " besides"
                                                 : std::string(dtype_name(config.torch_dtype));
    d.activation_from = fmt::format("--dtype auto: the model is {}", model);
    if (config.torch_dtype == DType::f16 && quantized.empty()) d.activation_from += ", and f16 activations are f32 here";
  } else {
    d.activation = explicit_dtype(activation, where, "--dtype");
    d.activation_from = fmt::format("--dtype {}", activation);
  }
  if (kv_cache == kAuto) {
    d.kv_cache = d.activation;
    d.kv_cache_from = "--kv-dtype auto: the activations'";
  } else {
    d.kv_cache = explicit_dtype(kv_cache, where, "--kv-dtype");
    d.kv_cache_from = fmt::format("--kv-dtype {}", kv_cache);
  }
  return d;
}

}  // namespace fourfold::model
