// The dedicated kernels' one dtype mapping: each known dtype to its element type, and a refusal naming the op,
// the argument and the dtype for any other (an unknown dtype was once read as f16).
#include <gtest/gtest.h>

#include "backends/cpu/kernel_types.h"
#include "fourfold/errors.h"

namespace fourfold::cpu {
namespace {

TEST(KernelTypes, KnownDtypesMapToTheirRowTypes) {
  EXPECT_EQ(row_type(DType::f32, "softmax", "x"), RowType::f32);
  EXPECT_EQ(row_type(DType::bf16, "softmax", "x"), RowType::bf16);
  EXPECT_EQ(row_type(DType::f16, "softmax", "x"), RowType::f16);
  EXPECT_EQ(row_type(DType::f8_e4m3fn, "linear", "weight"), RowType::e4m3);
  EXPECT_EQ(row_type(DType::f8_e5m2, "linear", "weight"), RowType::e5m2);
  EXPECT_EQ(mat_type(DType::f32, "grouped_mm", "a"), MatType::f32);
  EXPECT_EQ(mat_type(DType::bf16, "grouped_mm", "a"), MatType::bf16);
  EXPECT_EQ(mat_type(DType::f8_e4m3fn, "moe_experts", "weight"), MatType::e4m3);
}

TEST(KernelTypes, AnUnknownDtypeIsRefusedNamingTheOpTheArgumentAndTheDtype) {
  for (const DType dtype : {DType::i32, DType::i64, DType::boolean, DType::complex64, DType::f64}) {
    EXPECT_FALSE(known_row_type(dtype).has_value()) << dtype_name(dtype);
    try {
      row_type(dtype, "rms_norm", "x");
      ADD_FAILURE() << dtype_name(dtype) << " was mapped to a row type";
    } catch (const DTypeError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("rms_norm"), std::string::npos) << message;
      EXPECT_NE(message.find("'x'"), std::string::npos) << message;
      EXPECT_NE(message.find(std::string(dtype_name(dtype))), std::string::npos) << message;
    }
  }
  EXPECT_THROW(mat_type(DType::f16, "grouped_mm", "a"), DTypeError);        // was read as bf16
  EXPECT_THROW(mat_type(DType::f8_e5m2, "moe_experts", "weight"), DTypeError);   // was read as e4m3
}

}  // namespace
}  // namespace fourfold::cpu
