// The one mapping from a tensor's dtype to the element types the dedicated kernels read and write
// (kernels/kernels.h: RowType for rows, GEMM operands and decode GEMV weights; MatType for the K-contiguous
// dot tiles of grouped_mm and moe_experts). A dtype a kernel does not know is refused with DTypeError naming
// the op, the argument and the dtype, never read as another type.
#pragma once

#include <optional>
#include <string_view>

#include "backends/cpu/kernels/kernels.h"
#include "fourfold/dtype.h"

namespace fourfold::cpu {

// f32, bf16, f16, float8_e4m3fn, float8_e5m2; nothing for any other dtype (for covers()).
std::optional<RowType> known_row_type(DType dtype);
RowType row_type(DType dtype, std::string_view op, std::string_view argument);

// f32, bf16, float8_e4m3fn.
MatType mat_type(DType dtype, std::string_view op, std::string_view argument);

}  // namespace fourfold::cpu
