// Helpers of the model tests: a decoder from a preset's synthetic weights, FP8 quantization of a weight map.
#pragma once

#include <cmath>
#include <string>

#include "fourfold/dtype.h"
#include "model/llm/decoder.h"
#include "model/llm/presets.h"
#include "model/llm/weight_layout.h"

namespace fourfold::model::testing {

inline Decoder make_decoder(const ModelConfig& config, TensorMap weights, DType activation = DType::f32,
                            DType kv = DType::f32, int64_t max_context = 128) {
  DecoderOptions o;
  o.activation = activation;
  o.kv_cache = kv;
  o.max_context = max_context;
  return Decoder(config, bind_weights(config, std::move(weights), activation, "test"), o);
}

inline Decoder preset_decoder(const std::string& preset, DType activation = DType::f32, DType kv = DType::f32,
                              uint64_t seed = 1) {
  const ModelConfig c = preset_config(preset);
  return make_decoder(c, synthetic_weights(c, DType::bf16, seed), activation, kv);
}

// FP8 e4m3 with 128x128 block scales of every projection, as a Hugging Face FP8 checkpoint stores them; also
// returns (in `dequantized`) the f32 weights the FP8 ones stand for, for comparison.
inline TensorMap quantize_fp8_blocks(const ModelConfig& config, const TensorMap& weights, TensorMap& dequantized) {
  TensorMap out;
  dequantized.clear();
  for (const auto& [name, w] : weights) {
    out[name] = w;
    dequantized[name] = w;
  }
  for (const WeightSpec& spec : weight_layout(config)) {
    if (spec.role != WeightRole::projection) continue;
    const Tensor& w = weights.at(spec.name);
    const int64_t rows = w.size(0), cols = w.size(1);
    const Shape ss = fp8_scale_shape(config, w.shape());
    const std::vector<double> v = w.to_vector();
    std::vector<double> scale(ss[0] * ss[1], 0.0), deq(v.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double& s = scale[(r / 128) * ss[1] + c / 128];
        s = std::max(s, std::abs(v[r * cols + c]) / kFp8E4m3fnMax);
      }
    for (double& s : scale)
      s = s == 0 ? 1.0 : static_cast<double>(static_cast<float>(s));   // as stored (f32)
    Tensor q = Tensor::empty(w.shape(), DType::f8_e4m3fn);
    auto* bytes = q.data_as<uint8_t>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const double s = scale[(r / 128) * ss[1] + c / 128];
        bytes[r * cols + c] = quantize_fp8(v[r * cols + c], s, DType::f8_e4m3fn);
        deq[r * cols + c] = fp8_e4m3fn_to_f32(bytes[r * cols + c]) * s;
      }
    out[spec.name] = q;
    out[fp8_scale_name(spec.name)] = Tensor::from_vector(scale, ss, DType::f32);
    dequantized[spec.name] = Tensor::from_vector(deq, w.shape(), DType::f32);
  }
  return out;
}

}  // namespace fourfold::model::testing
