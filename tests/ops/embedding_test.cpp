// embedding on the reference tier: hand cases, exact rows for every dtype and layout, index shapes, errors.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::bit_equal;

Tensor iota_weight(int64_t rows, int64_t cols, DType dtype) {
  std::vector<double> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return Tensor::from_vector(v, {rows, cols}, dtype);
}

TEST(Embedding, HandComputedGather) {
  testing::ReferenceOnly ref;
  const Tensor w = iota_weight(4, 3, DType::f32);   // row r is {3r, 3r + 1, 3r + 2}
  for (DType index_type : {DType::i64, DType::i32}) {
    const Tensor idx = Tensor::from_vector({3, 0, 1, 3}, {2, 2}, index_type);
    Tensor out = embedding(w, idx);
    ASSERT_EQ(out.shape(), (Shape{2, 2, 3}));
    EXPECT_EQ(out.dtype(), DType::f32);
    EXPECT_TRUE(all_close(out, {9, 10, 11, 0, 1, 2, 3, 4, 5, 9, 10, 11}, 0, 0)) << dtype_name(index_type);
  }
  Tensor one = embedding(w, Tensor::full({}, 2.0, DType::i64));
  ASSERT_EQ(one.shape(), (Shape{3}));
  EXPECT_TRUE(all_close(one, {6, 7, 8}, 0, 0));
}

TEST(Embedding, RowsAreCopiedBitExactForEveryDtypeAndLayout) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64, DType::f8_e4m3fn, DType::f8_e5m2}) {
    Tensor w = testing::randn({7, 5}, dtype, 51);
    // A NaN with a payload in f32 must come through unchanged.
    if (dtype == DType::f32) {
      const uint32_t bits = 0x7FC01234u;
      std::memcpy(w.element_ptr(std::vector<int64_t>{6, 4}), &bits, 4);
    }
    const Tensor idx = Tensor::from_vector({6, 0, 6, 3, 1, 2}, {3, 2}, DType::i64);
    Tensor out = embedding(w, idx);
    ASSERT_EQ(out.shape(), (Shape{3, 2, 5}));
    const std::vector<double> rows = idx.to_vector();
    for (int64_t t = 0; t < 6; ++t)
      EXPECT_TRUE(bit_equal(out.reshape({6, 5}).select(0, t), w.select(0, static_cast<int64_t>(rows[t]))))
          << dtype_name(dtype) << " position " << t;
    EXPECT_TRUE(bit_equal(embedding(testing::non_contiguous(w), testing::non_contiguous(idx)), out))
        << dtype_name(dtype);
    // A stride-0 index tensor repeats a row.
    Tensor repeated = embedding(w, Tensor::full({1}, 4.0, DType::i32).expand({3}));
    for (int64_t t = 0; t < 3; ++t) EXPECT_TRUE(bit_equal(repeated.select(0, t), w.select(0, 4)));
  }
}

TEST(Embedding, EmptyShapes) {
  testing::ReferenceOnly ref;
  const Tensor w = iota_weight(4, 3, DType::bf16);
  EXPECT_EQ(embedding(w, Tensor::empty({0}, DType::i64)).shape(), (Shape{0, 3}));
  EXPECT_EQ(embedding(w, Tensor::empty({2, 0}, DType::i32)).shape(), (Shape{2, 0, 3}));
  Tensor narrow = embedding(Tensor::empty({4, 0}, DType::f32), Tensor::from_vector({1, 2}, {2}, DType::i64));
  EXPECT_EQ(narrow.shape(), (Shape{2, 0}));
  // No rows at all is fine as long as nothing is looked up.
  EXPECT_EQ(embedding(Tensor::empty({0, 3}, DType::f32), Tensor::empty({5, 0}, DType::i64)).shape(), (Shape{5, 0, 3}));
}

TEST(Embedding, BadArgumentsNameOpAndArgument) {
  const Tensor w = Tensor::zeros({4, 3}, DType::f32);
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { embedding(w, Tensor::zeros({2}, DType::f32)); }, {"embedding", "'indices'", "float32"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { embedding(Tensor::zeros({4}, DType::f32), Tensor::zeros({2}, DType::i64)); }, {"embedding", "'weight'", "[4]"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { embedding(Tensor::zeros({4, 3}, DType::i32), Tensor::zeros({2}, DType::i64)); },
      {"embedding", "'weight'", "int32"}));
  EXPECT_TRUE(testing::throws_with<ValueError>(
      [&] { embedding(w, Tensor::from_vector({0, 4}, {2}, DType::i64)); }, {"embedding", "'indices'", "index 4", "V = 4"}));
  EXPECT_TRUE(testing::throws_with<ValueError>(
      [&] { embedding(w, Tensor::from_vector({-1}, {1}, DType::i32)); }, {"embedding", "'indices'", "index -1", "V = 4"}));
  // A huge int64 index is reported exactly, not rounded through double.
  Tensor big = Tensor::empty({1}, DType::i64);
  big.data_as<int64_t>()[0] = (int64_t{1} << 53) + 1;
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { embedding(w, big); }, {"embedding", "9007199254740993"}));
  EXPECT_TRUE(testing::throws_with<ValueError>(
      [&] { embedding(Tensor::empty({0, 3}, DType::f32), Tensor::zeros({1}, DType::i64)); }, {"embedding", "V = 0"}));
}

}  // namespace
}  // namespace fourfold
