// The fp8 suite's row: read in scaled_mm.cpp.
#pragma once

#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "check/op_cases/linear_params.h"

namespace fourfold {

// scaled_mm: a [m, k] fp8, b = W^T with W [n, k] fp8, scales per recipe, out_dtype output.
struct Fp8LinearCase {
  int64_t m = 1, n = 1, k = 1;
  Fp8Recipe recipe = Fp8Recipe::tensorwise;
  DType out_dtype = DType::bf16;
};
void to_json(nlohmann::ordered_json& j, const Fp8LinearCase& c);

}  // namespace fourfold
