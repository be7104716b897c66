// rotary_embedding on the reference tier: both pairings against the formula, norm preservation, partial
// rotary, the identity at position 0, broadcasting, errors.
#include <cmath>
#include <vector>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

// cos and sin [L, half] of angles pos * theta^(-i / half), the usual RoPE table.
std::pair<Tensor, Tensor> rope_table(int64_t l, int64_t half, DType dtype) {
  std::vector<double> c, s;
  for (int64_t p = 0; p < l; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = p * std::pow(10000.0, -static_cast<double>(i) / half);
      c.push_back(std::cos(angle));
      s.push_back(std::sin(angle));
    }
  return {Tensor::from_vector(c, {l, half}, dtype), Tensor::from_vector(s, {l, half}, dtype)};
}

// x [B, H, L, D] with cos/sin [L, half] written out: the pair (first, second) of index i becomes
// (a cos - b sin, b cos + a sin); columns from 2 * half on are copied.
std::vector<double> explicit_rotary(const Tensor& x, const Tensor& cos, const Tensor& sin, RotaryStyle style) {
  const int64_t l = x.size(-2), d = x.size(-1), half = cos.size(-1);
  auto out = x.to_vector();
  const auto xv = x.to_vector(), cv = cos.to_vector(), sv = sin.to_vector();
  for (size_t row = 0; row < xv.size() / d; ++row) {
    const int64_t pos = static_cast<int64_t>(row) % l;
    for (int64_t i = 0; i < half; ++i) {
      const int64_t first = style == RotaryStyle::half_split ? i : 2 * i;
      const int64_t second = style == RotaryStyle::half_split ? i + half : 2 * i + 1;
      const double a = xv[row * d + first], b = xv[row * d + second];
      const double c = cv[pos * half + i], s = sv[pos * half + i];
      out[row * d + first] = a * c - b * s;
      out[row * d + second] = b * c + a * s;
    }
  }
  return out;
}

double tolerance(DType dtype) { return testing::rounding_tolerance(dtype, 1e-13); }

TEST(RotaryEmbedding, HandComputedQuarterTurn) {
  testing::ReferenceOnly ref;
  Tensor x = Tensor::from_vector({1, 2, 3, 4}, {1, 4}, DType::f64);
  Tensor c = Tensor::from_vector({0, 1}, {1, 2}, DType::f64), s = Tensor::from_vector({1, 0}, {1, 2}, DType::f64);
  // half_split pairs (x0, x2) rotated a quarter turn, (x1, x3) unchanged
  EXPECT_TRUE(all_close(rotary_embedding(x, c, s), {-3, 2, 1, 4}, 0, 0));
  // interleaved pairs (x0, x1) rotated a quarter turn, (x2, x3) unchanged
  EXPECT_TRUE(all_close(rotary_embedding(x, c, s, RotaryStyle::interleaved), {-2, 1, 3, 4}, 0, 0));
}

TEST(RotaryEmbedding, BothStylesMatchTheFormulaAndPreservePairNorms) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    Tensor x = randn({2, 3, 5, 8}, dtype, 1);
    auto [c, s] = rope_table(5, 4, dtype);
    for (RotaryStyle style : {RotaryStyle::half_split, RotaryStyle::interleaved}) {
      const double tol = tolerance(dtype);
      Tensor y = rotary_embedding(x, c, s, style);
      EXPECT_TRUE(all_close(y, explicit_rotary(x, c, s, style), tol, tol)) << dtype_name(dtype);
      EXPECT_TRUE(all_close(rotary_embedding(testing::non_contiguous(x), testing::non_contiguous(c),
                                             testing::non_contiguous(s), style),
                            y, 0, 0)) << dtype_name(dtype);
      if (dtype != DType::f64) continue;
      const auto xv = x.to_vector(), yv = y.to_vector();
      for (size_t row = 0; row < xv.size() / 8; ++row)
        for (int i = 0; i < 4; ++i) {
          const int a = style == RotaryStyle::half_split ? i : 2 * i;
          const int b = style == RotaryStyle::half_split ? i + 4 : 2 * i + 1;
          EXPECT_NEAR(std::hypot(yv[row * 8 + a], yv[row * 8 + b]), std::hypot(xv[row * 8 + a], xv[row * 8 + b]), 1e-12);
        }
    }
  }
}

TEST(RotaryEmbedding, InterleavedIsHalfSplitOnDeinterleavedColumns) {
  testing::ReferenceOnly ref;
  Tensor x = randn({3, 6}, DType::f64, 1);
  auto [c, s] = rope_table(3, 3, DType::f64);
  // columns (0, 2, 4, 1, 3, 5) put interleaved pairs (2i, 2i+1) at (i, i+3)
  Tensor deinterleaved = x.view({3, 3, 2}).transpose(1, 2).reshape({3, 6});
  Tensor expected = rotary_embedding(deinterleaved, c, s).view({3, 2, 3}).transpose(1, 2).reshape({3, 6});
  EXPECT_TRUE(all_close(rotary_embedding(x, c, s, RotaryStyle::interleaved), expected, 0, 0));
}

TEST(RotaryEmbedding, PartialRotaryPassesTheTailThrough) {
  testing::ReferenceOnly ref;
  Tensor x = randn({2, 4, 7}, DType::bf16, 1);   // D = 7, R = 4: three columns pass through
  auto [c, s] = rope_table(4, 2, DType::bf16);
  for (RotaryStyle style : {RotaryStyle::half_split, RotaryStyle::interleaved}) {
    Tensor y = rotary_embedding(x, c, s, style);
    EXPECT_TRUE(testing::bit_equal(y.narrow(2, 4, 3).contiguous(), x.narrow(2, 4, 3).contiguous()));
    EXPECT_TRUE(all_close(y, explicit_rotary(x, c, s, style), 1e-2, 1e-2));
  }
  // R = 0: everything passes through.
  Tensor empty = Tensor::empty({4, 0}, DType::bf16);
  EXPECT_TRUE(testing::bit_equal(rotary_embedding(x, empty, empty), x));
}

TEST(RotaryEmbedding, PositionZeroIsTheIdentity) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16}) {
    Tensor x = randn({2, 3, 1, 8}, dtype, 1);
    auto [c, s] = rope_table(1, 4, dtype);   // cos 1, sin 0
    for (RotaryStyle style : {RotaryStyle::half_split, RotaryStyle::interleaved})
      EXPECT_TRUE(testing::bit_equal(rotary_embedding(x, c, s, style), x)) << dtype_name(dtype);
  }
}

TEST(RotaryEmbedding, CosSinBroadcastAgainstX) {
  testing::ReferenceOnly ref;
  Tensor x = randn({2, 3, 5, 8}, DType::f64, 1);
  auto [c, s] = rope_table(5, 4, DType::f64);
  Tensor y = rotary_embedding(x, c, s);
  // [B, 1, L, R/2] as Hugging Face passes them, and a full [B, H, L, R/2] copy
  EXPECT_TRUE(all_close(rotary_embedding(x, c.unsqueeze(0).unsqueeze(0).expand({2, 1, 5, 4}),
                                         s.unsqueeze(0).unsqueeze(0).expand({2, 1, 5, 4})), y, 0, 0));
  EXPECT_TRUE(all_close(rotary_embedding(x, c.expand({2, 3, 5, 4}).contiguous(), s.expand({2, 3, 5, 4}).contiguous()),
                        y, 0, 0));
  // one angle for every position
  Tensor c1 = c.narrow(0, 3, 1), s1 = s.narrow(0, 3, 1);
  Tensor y1 = rotary_embedding(x, c1, s1);
  EXPECT_TRUE(all_close(y1, explicit_rotary(x, c1.expand({5, 4}).contiguous(), s1.expand({5, 4}).contiguous(),
                                            RotaryStyle::half_split), 1e-13, 1e-13));
  // empty leading dims
  EXPECT_EQ(rotary_embedding(Tensor::empty({0, 5, 8}, DType::f64), c, s).shape(), (Shape{0, 5, 8}));
}

TEST(RotaryEmbedding, BadArgumentsNameOpAndArgument) {
  Tensor x = Tensor::zeros({2, 5, 8}, DType::f32);
  Tensor c = Tensor::zeros({5, 4}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rotary_embedding(x, c, Tensor::zeros({5, 3}, DType::f32)); },
                                               {"rotary_embedding", "'sin'", "[5, 4]", "[5, 3]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rotary_embedding(x, c, Tensor::zeros({1, 5, 4}, DType::f32)); },
                                               {"rotary_embedding", "'sin'"}));
  // R = 2 * cos.size(-1) is even by construction; one wider than D is refused.
  Tensor wide = Tensor::zeros({5, 5}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rotary_embedding(x, wide, wide); }, {"rotary_embedding", "'cos'", "R <= 8"}));
  Tensor odd_d = Tensor::zeros({2, 5, 7}, DType::f32);
  Tensor c4 = Tensor::zeros({5, 4}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rotary_embedding(odd_d, c4, c4); }, {"rotary_embedding", "'cos'", "R <= 7"}));
  Tensor bad_l = Tensor::zeros({4, 4}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rotary_embedding(x, bad_l, bad_l); },
                                               {"rotary_embedding", "'cos'", "broadcasts to [2, 5, 4]"}));
  Tensor too_many = Tensor::zeros({1, 2, 5, 4}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rotary_embedding(x, too_many, too_many); },
                                               {"rotary_embedding", "'cos'", "broadcasts"}));
  Tensor scalar = Tensor::zeros({}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rotary_embedding(x, scalar, scalar); }, {"rotary_embedding", "'cos'"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { rotary_embedding(scalar, c, c); }, {"rotary_embedding", "'x'"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { rotary_embedding(x, c.to(DType::bf16), c.to(DType::bf16)); },
                                               {"rotary_embedding", "'cos'", "bfloat16"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { rotary_embedding(x.to(DType::i64), c, c); },
                                               {"rotary_embedding", "'x'", "int64"}));
}

}  // namespace
}  // namespace fourfold
