// Tensor::empty refuses a shape whose element count or byte count does not fit in 64 bits, naming the shape,
// instead of wrapping to a small size and handing out a block far smaller than the tensor claims.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "fourfold/errors.h"
#include "fourfold/tensor.h"

namespace fourfold {
namespace {

std::string shape_error(const Shape& shape, DType dtype) {
  try {
    Tensor::empty(shape, dtype);
  } catch (const ShapeError& e) {
    return e.what();
  }
  return "";
}

TEST(TensorSizeOverflow, AnElementCountPast64BitsIsAShapeErrorNamingTheShape) {
  const int64_t big = int64_t(1) << 32;
  const std::string m = shape_error({big, big, 4}, DType::f32);   // 2^66 elements: wraps to 0
  EXPECT_NE(m.find("Tensor::empty"), std::string::npos) << m;
  EXPECT_NE(m.find("[4294967296, 4294967296, 4]"), std::string::npos) << m;
}

TEST(TensorSizeOverflow, AByteCountPast64BitsIsAShapeErrorNamingTheShape) {
  const int64_t elements = (int64_t(1) << 62) + 1;   // fits as a count, not as f32 bytes
  const std::string m = shape_error({elements}, DType::f32);
  EXPECT_NE(m.find(std::to_string(elements)), std::string::npos) << m;
  EXPECT_NE(m.find("bytes"), std::string::npos) << m;
}

TEST(TensorSizeOverflow, AZeroSizeAnywhereIsAnEmptyTensorNotAnOverflow) {
  const Tensor t = Tensor::empty({int64_t(1) << 62, int64_t(1) << 62, 0}, DType::f32);
  EXPECT_EQ(t.numel(), 0);
}

}  // namespace
}  // namespace fourfold
