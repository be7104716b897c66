#include "backends/cpu/kernel_types.h"

#include <string>

#include "fourfold/errors.h"

namespace fourfold::cpu {

std::optional<RowType> known_row_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return RowType::f32;
    case DType::bf16: return RowType::bf16;
    case DType::f16: return RowType::f16;
    case DType::f8_e4m3fn: return RowType::e4m3;
    case DType::f8_e5m2: return RowType::e5m2;
    default: return std::nullopt;
  }
}

RowType row_type(DType dtype, std::string_view op, std::string_view argument) {
  if (const auto type = known_row_type(dtype)) return *type;
  fail<DTypeError>(op, argument, "float32, bfloat16, float16, float8_e4m3fn or float8_e5m2 (a dedicated kernel's row)",
                   std::string(dtype_name(dtype)));
}

MatType mat_type(DType dtype, std::string_view op, std::string_view argument) {
  switch (dtype) {
    case DType::f32: return MatType::f32;
    case DType::bf16: return MatType::bf16;
    case DType::f8_e4m3fn: return MatType::e4m3;
    default:
      fail<DTypeError>(op, argument, "float32, bfloat16 or float8_e4m3fn (a dedicated dot tile's operand)",
                       std::string(dtype_name(dtype)));
  }
}

}  // namespace fourfold::cpu
