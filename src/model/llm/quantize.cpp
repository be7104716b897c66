// Block and rowwise FP8 quantization of a checkpoint's projections.
#include "model/llm/quantize.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "fourfold/errors.h"
#include "fourfold/parallel.h"
#include "core/fp4_blocks.h"
#include "model/llm/fp4_checkpoint.h"
#include "model/llm/model_folder.h"
#include "model/llm/weight_layout.h"

namespace fourfold::model {
namespace {

constexpr int64_t kBlock = 128;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One projection: each block's scale is its amax / 448, so the block's largest magnitude maps to e4m3's
// largest finite value; the scale is rounded to f32 first and the values divided by that f32, so that
// dequantizing with the stored scale is what the rounding saw.
std::pair<Tensor, Tensor> quantize_projection(const Tensor& weight, int64_t block_rows, int64_t block_cols) {
  const Tensor w = weight.to(DType::f32).contiguous();
  const int64_t out = w.size(0), in = w.size(1);
  const int64_t scale_rows = ceil_div(out, block_rows), scale_cols = ceil_div(in, block_cols);
  Tensor q = Tensor::empty({out, in}, DType::f8_e4m3fn);
  Tensor scale = Tensor::empty({scale_rows, scale_cols}, DType::f32);
  const float* src = w.data_as<float>();
  auto* dst = q.data_as<uint8_t>();
  float* s = scale.data_as<float>();
  parallel_for(0, scale_rows, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t br = r0; br < r1; ++br) {
      const int64_t row_end = std::min(out, (br + 1) * block_rows);
      for (int64_t bc = 0; bc < scale_cols; ++bc) {
        const int64_t col_end = std::min(in, (bc + 1) * block_cols);
        double amax = 0;
        for (int64_t r = br * block_rows; r < row_end; ++r)
          for (int64_t c = bc * block_cols; c < col_end; ++c) amax = std::max(amax, std::fabs(double(src[r * in + c])));
        // An all-zero block: any scale gives zeros; 1 keeps the dequantized values exact.
        const float block_scale = amax > 0 ? static_cast<float>(amax / kFp8E4m3fnMax) : 1.0f;
        s[br * scale_cols + bc] = block_scale;
        for (int64_t r = br * block_rows; r < row_end; ++r)
          for (int64_t c = bc * block_cols; c < col_end; ++c)
            dst[r * in + c] = quantize_fp8(src[r * in + c], block_scale, DType::f8_e4m3fn);
      }
    }
  });
  return {q, scale};
}

struct Fp4Projection {
  Tensor codes, scale;
  std::optional<Tensor> global;   // NVFP4: the stored divisor, f32 [1]
};

Fp4Projection quantize_fp4_projection(const Tensor& weight, bool nv) {
  const Tensor w = weight.to(DType::f32).contiguous();
  const int64_t out = w.size(0), in = w.size(1), block = nv ? 16 : 32, blocks = in / block;
  const float* src = w.data_as<float>();
  double amax = 0;
  for (int64_t i = 0; i < out * in; ++i) amax = std::max(amax, std::fabs(double(src[i])));
  // compressed-tensors' global scale: the tensor's amax maps to e4m3's largest scale times e2m1's largest value.
  const float g = nv && amax > 0 ? static_cast<float>(kFp8E4m3fnMax * kFp4E2m1Max / amax) : 1.0f;
  Fp4Projection q{Tensor::zeros({out, in / 2}, DType::f4_e2m1fn_x2),
                  Tensor::empty({out, blocks}, nv ? DType::f8_e4m3fn : DType::f8_e8m0fnu), std::nullopt};
  if (nv) q.global = Tensor::from_vector({g}, {1}, DType::f32);
  auto* codes = static_cast<uint8_t*>(q.codes.data());
  auto* scales = static_cast<uint8_t*>(q.scale.data());
  parallel_for(0, out, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + r * in + b * block;
        double bmax = 0;
        for (int64_t i = 0; i < block; ++i) bmax = std::max(bmax, std::fabs(double(x[i])));
        uint8_t code;
        if (nv) {
          code = bmax > 0 ? f64_to_fp8_e4m3fn(static_cast<float>(bmax / kFp4E2m1Max * g)) : f64_to_fp8_e4m3fn(1.0);
          if (fp8_e4m3fn_to_f32(code) == 0.0f) code = f64_to_fp8_e4m3fn(1.0);   // underflowed: the block quantizes to zeros anyway
        } else {
          int e = 0;
          std::frexp(bmax, &e);   // bmax in [2^(e-1), 2^e)
          code = bmax > 0 ? static_cast<uint8_t>(std::clamp(e - 1 - 2 + 127, 0, 254)) : uint8_t{127};
        }
        scales[r * blocks + b] = code;
        const double unit = nv ? static_cast<double>(fp8_e4m3fn_to_f32(code) / g) : fp8_e8m0fnu_to_f32(code);
        for (int64_t i = 0; i < block; ++i) {
          const uint8_t v = quantize_fp4(x[i], unit);
          const int64_t k = b * block + i;
          codes[r * in / 2 + k / 2] |= static_cast<uint8_t>(v << (4 * (k % 2)));
        }
      }
  });
  return q;
}

}  // namespace

std::optional<Fp4Format> parse_fp4_format(const std::string& name) {
  if (name == "nvfp4") return Fp4Format::nvfp4;
  if (name == "mxfp4") return Fp4Format::mxfp4;
  return std::nullopt;
}

Fp4Quantization fp4_quantization(Fp4Format format, bool all_projections) {
  Fp4Quantization q;
  q.nv = format == Fp4Format::nvfp4;
  if (all_projections) {
    q.targets = {"Linear"};
    q.ignore = {"lm_head", "re:.*mlp\\.gate$", "re:.*mlp\\.shared_expert_gate$", "re:.*linear_attn\\.in_proj_[ab]$"};
  } else {
    q.targets = {"re:.*mlp\\.experts\\.\\d+\\.(gate|up|down)_proj$"};
  }
  return q;
}

TensorMap quantize_fp4_tensors(const ModelConfig& config, TensorMap weights) {
  for (const WeightSpec& spec : weight_layout(config)) {
    const auto it = weights.find(spec.name);
    if (it == weights.end() || !stored_as_fp4(config, spec)) continue;
    if (spec.shape[1] % config.fp4->block() != 0)
      fail<ValueError>("quantize", spec.name, fmt::format("an input size that is a multiple of {}", config.fp4->block()),
                       fmt::format("{}", spec.shape[1]));
    Fp4Projection p = quantize_fp4_projection(it->second, config.fp4->nv);
    it->second = p.codes;
    weights[fp4_scale_name(spec.name)] = p.scale;
    if (p.global) weights[fp4_global_name(spec.name)] = *p.global;
  }
  return weights;
}

QuantizedCheckpoint quantize_checkpoint_fp4(const ModelConfig& config, const TensorMap& weights, Fp4Format format,
                                            bool all_projections) {
  if (config.quantization || config.fp4) fail<ValueError>("quantize", "config", "an unquantized checkpoint", "one already quantized");
  check_weights(config, weights, "quantize");
  QuantizedCheckpoint out{config, {}};
  out.config.fp4 = fp4_quantization(format, all_projections);
  out.weights = quantize_fp4_tensors(out.config, weights);
  return out;
}

Fp8Recipe parse_fp8_recipe(const std::string& name) {
  if (name == "fp8-block") return Fp8Recipe::block;
  if (name == "fp8-row") return Fp8Recipe::row;
  fail<ValueError>("quantize", "--to", "fp8-block or fp8-row", name);
}

QuantizedCheckpoint quantize_checkpoint(const ModelConfig& config, const TensorMap& weights, Fp8Recipe recipe,
                                        bool include_lm_head) {
  if (config.quantization) fail<ValueError>("quantize", "config", "an unquantized checkpoint", "one already FP8");
  if (include_lm_head && config.tie_word_embeddings)
    fail<ValueError>("quantize", "--lm-head", "a model with its own lm_head.weight",
                     "tie_word_embeddings: lm_head is embed_tokens");
  check_weights(config, weights, "quantize");
  QuantizedCheckpoint out{config, weights};
  Fp8Quantization q;
  q.fmt = "e4m3";
  if (recipe == Fp8Recipe::row) q.weight_block_size.reset();
  if (!include_lm_head) q.modules_to_not_convert.push_back("lm_head");
  for (int64_t l = 0; l < config.num_hidden_layers; ++l)
    if (config.is_moe_layer(l)) q.modules_to_not_convert.push_back(layer_weight(l, "mlp.gate"));
  out.config.quantization = q;

  for (const WeightSpec& spec : weight_layout(config)) {
    if (!stored_as_fp8(out.config, spec)) continue;
    const Tensor& w = weights.at(spec.name);
    auto [weight, scale] = recipe == Fp8Recipe::block ? quantize_projection(w, kBlock, kBlock)
                                                      : quantize_projection(w, 1, spec.shape[1]);
    out.weights[spec.name] = weight;
    out.weights[fp8_scale_name(spec.name)] = scale;
  }
  return out;
}

Tensor dequantize_fp8(const Tensor& weight, const Tensor& scale_inv) {
  if (weight.dim() != 2 || scale_inv.dim() != 2 || !is_fp8(weight.dtype()))
    fail<ShapeError>("dequantize_fp8", "weight", "an fp8 [out, in] weight and a 2-d scale",
                     weight.describe() + " and " + scale_inv.describe());
  const int64_t out = weight.size(0), in = weight.size(1);
  const int64_t sr = scale_inv.size(0), sc = scale_inv.size(1);
  const int64_t block_rows = sr == out ? 1 : kBlock, block_cols = sc == 1 ? in : kBlock;
  if (ceil_div(out, block_rows) != sr || ceil_div(in, std::max<int64_t>(block_cols, 1)) != sc)
    fail<ShapeError>("dequantize_fp8", "scale_inv",
                     fmt::format("[{}, {}] or [{}, 1]", ceil_div(out, kBlock), ceil_div(in, kBlock), out),
                     shape_string(scale_inv.shape()));
  const std::vector<double> w = weight.to_vector(), s = scale_inv.to_vector();
  std::vector<double> result(w.size());
  for (int64_t r = 0; r < out; ++r)
    for (int64_t c = 0; c < in; ++c) result[r * in + c] = w[r * in + c] * s[(r / block_rows) * sc + c / block_cols];
  return Tensor::from_vector(result, {out, in}, DType::f32);
}

}  // namespace fourfold::model
