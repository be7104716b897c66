// The linear suites' row (decode-linear, prefill-linear, the 8-bit and FP4 ones): read in linear.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "fourfold/dtype.h"

namespace fourfold {

// The scales of a quantized weight: FP8's three recipes (scaled_mm's and scaled_linear's), and FP4's two formats
// (nvfp4: e4m3 per 16 values and an f32 global scale; mxfp4: e8m0 per 32), which only the linear suites'
// float4_e2m1fn_x2 weights take.
enum class Fp8Recipe { tensorwise, rowwise, block_128x128, nvfp4, mxfp4 };
std::string_view fp8_recipe_name(Fp8Recipe recipe);

// linear: x [m, k] in the row's dtype, W [n, k] in weight_dtype (null: x's dtype); an fp8 or fp4 weight goes
// through scaled_linear with a weight scale of `recipe` (weight-only low precision).
struct LinearCase {
  int64_t m = 1, n = 1, k = 1;
  bool bias = false;
  std::optional<DType> weight_dtype = std::nullopt;
  Fp8Recipe recipe = Fp8Recipe::tensorwise;
};
void to_json(nlohmann::ordered_json& j, const LinearCase& c);

}  // namespace fourfold
