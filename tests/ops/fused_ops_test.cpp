// The fused decoder helpers' API: add_rms_norm, rotary_embedding_ and silu_mul compute what their unfused
// compositions do, and bad arguments name the op and the argument.
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;
using testing::throws_with;

TEST(AddRmsNorm, IsRmsNormOfTheSum) {
  testing::ReferenceOnly ref;
  const Tensor x = randn({2, 3, 8}, DType::bf16, 1), r = randn({2, 3, 8}, DType::bf16, 2), w = randn({8}, DType::bf16, 3);
  auto [y, h] = add_rms_norm(x, r, {8}, w, 1e-5);
  const Tensor sum = add(x, r);
  EXPECT_TRUE(testing::bit_equal(h, sum));
  EXPECT_TRUE(testing::bit_equal(y, rms_norm(sum, {8}, w, 1e-5)));
  EXPECT_EQ(y.shape(), x.shape());
}

TEST(AddRmsNorm, BadArgumentsNameTheOpAndArgument) {
  const Tensor x = randn({2, 8}, DType::f32, 1);
  EXPECT_TRUE(throws_with<ShapeError>([&] { add_rms_norm(x, randn({2, 7}, DType::f32, 2), {8}); },
                                      {"add_rms_norm", "residual"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { add_rms_norm(x, randn({2, 8}, DType::bf16, 2), {8}); },
                                      {"add_rms_norm", "residual"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { add_rms_norm(x, x, {4}); }, {"add_rms_norm", "normalized_shape"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { add_rms_norm(x, x, {8}, randn({4}, DType::f32, 3)); },
                                      {"add_rms_norm", "weight"}));
}

TEST(RotaryInPlace, EqualsTheOutOfPlaceOp) {
  testing::ReferenceOnly ref;
  const Tensor x = randn({3, 10}, DType::f32, 4), c = randn({3, 4}, DType::f32, 5), s = randn({3, 4}, DType::f32, 6);
  for (RotaryStyle style : {RotaryStyle::half_split, RotaryStyle::interleaved}) {
    Tensor y = x.clone();
    rotary_embedding_(y, c, s, style);
    EXPECT_TRUE(testing::bit_equal(y, rotary_embedding(x, c, s, style)));
  }
}

TEST(RotaryInPlace, BadArgumentsNameTheOpAndArgument) {
  Tensor x = randn({3, 10}, DType::f32, 4);
  const Tensor c = randn({3, 4}, DType::f32, 5);
  EXPECT_TRUE(throws_with<ShapeError>([&] { rotary_embedding_(x, c, randn({3, 5}, DType::f32, 6)); },
                                      {"rotary_embedding_", "sin"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { rotary_embedding_(x, randn({3, 6}, DType::f32, 6), randn({3, 6}, DType::f32, 6)); },
                                      {"rotary_embedding_", "cos"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { rotary_embedding_(x, c.to(DType::bf16), c.to(DType::bf16)); },
                                      {"rotary_embedding_", "cos"}));
  Tensor undefined;
  EXPECT_TRUE(throws_with<ValueError>([&] { rotary_embedding_(undefined, c, c); }, {"rotary_embedding_", "x"}));
}

TEST(SiluMul, IsSiluTimesUp) {
  testing::ReferenceOnly ref;
  const Tensor g = randn({4, 9}, DType::f32, 7, 3.0), u = randn({4, 9}, DType::f32, 8);
  EXPECT_TRUE(all_close(silu_mul(g, u), mul(silu(g), u), 1e-6, 1e-7));
  EXPECT_EQ(silu_mul(randn({0, 3}, DType::f16, 1), randn({0, 3}, DType::f16, 2)).shape(), (Shape{0, 3}));
}

TEST(SiluMul, BadArgumentsNameTheOpAndArgument) {
  const Tensor g = randn({4, 9}, DType::f32, 7);
  EXPECT_TRUE(throws_with<ShapeError>([&] { silu_mul(g, randn({4, 1}, DType::f32, 8)); }, {"silu_mul", "up"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { silu_mul(g, g.to(DType::bf16)); }, {"silu_mul", "up"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { silu_mul(g.to(DType::i32), g.to(DType::i32)); }, {"silu_mul", "gate"}));
}

}  // namespace
}  // namespace fourfold
