// scaled_mm on the reference tier: every recipe and FP8 format against dequantize-then-matmul, edges, errors.
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include <fmt/format.h>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;

enum class Recipe { tensorwise, rowwise, block_1x128, block_128x128 };
constexpr Recipe kRecipes[] = {Recipe::tensorwise, Recipe::rowwise, Recipe::block_1x128, Recipe::block_128x128};
const char* recipe_name(Recipe r) {
  switch (r) {
    case Recipe::tensorwise: return "tensorwise";
    case Recipe::rowwise: return "rowwise";
    case Recipe::block_1x128: return "1x128";
    case Recipe::block_128x128: return "128x128";
  }
  return "?";
}

int64_t blocks(int64_t n) { return (n + 127) / 128; }

double el(const Tensor& t, std::vector<int64_t> index) { return load_as_double(t.dtype(), t.element_ptr(index)); }
void set(Tensor& t, std::vector<int64_t> index, double v) { store_from_double(t.dtype(), t.element_ptr(index), v); }

Shape scale_shape_a(Recipe r, int64_t m, int64_t k) {
  switch (r) {
    case Recipe::tensorwise: return {};
    case Recipe::rowwise: return {m, 1};
    case Recipe::block_1x128: return {m, blocks(k)};
    case Recipe::block_128x128: return {blocks(m), blocks(k)};
  }
  return {};
}
Shape scale_shape_b(Recipe r, int64_t k, int64_t n) {
  switch (r) {
    case Recipe::tensorwise: return {1};
    case Recipe::rowwise: return {1, n};
    case Recipe::block_1x128: return {blocks(k), n};
    case Recipe::block_128x128: return {blocks(k), blocks(n)};
  }
  return {};
}
// The scale element that multiplies a[i, j] (a: i = m, j = k) or b[i, j] (b: i = k, j = n).
double scale_for_a(const Tensor& s, Recipe r, int64_t m, int64_t k) {
  switch (r) {
    case Recipe::tensorwise: return s.item();
    case Recipe::rowwise: return el(s, {m, 0});
    case Recipe::block_1x128: return el(s, {m, k / 128});
    case Recipe::block_128x128: return el(s, {m / 128, k / 128});
  }
  return 0;
}
double scale_for_b(const Tensor& s, Recipe r, int64_t k, int64_t n) {
  switch (r) {
    case Recipe::tensorwise: return s.item();
    case Recipe::rowwise: return el(s, {0, n});
    case Recipe::block_1x128: return el(s, {k / 128, n});
    case Recipe::block_128x128: return el(s, {k / 128, n / 128});
  }
  return 0;
}

// float64 copy of q with each element multiplied by its scale element.
template <class ScaleOf>
Tensor dequantize(const Tensor& q, ScaleOf scale_of) {
  Tensor d = Tensor::empty(q.shape(), DType::f64);
  for (int64_t i = 0; i < q.size(0); ++i)
    for (int64_t j = 0; j < q.size(1); ++j) set(d, {i, j}, el(q, {i, j}) * scale_of(i, j));
  return d;
}

// Random FP8 values with the format's extremes planted: +-max, the smallest and largest subnormals.
// Generated here rather than with testing::randn: some operands pass 16384 elements, where Tensor's fills go
// through parallel_for, and this file should not depend on the thread pool.
Tensor fp8_operand(const Shape& shape, DType dtype, uint64_t seed) {
  const double max = fp8_max(dtype);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, max / 8);
  std::vector<double> values(static_cast<size_t>(shape_numel(shape)));
  for (double& v : values) v = normal(rng);
  Tensor t = Tensor::from_vector(values, shape, dtype);
  const double min_sub = dtype == DType::f8_e4m3fn ? std::ldexp(1.0, -9) : std::ldexp(1.0, -16);
  const double max_sub = dtype == DType::f8_e4m3fn ? 7 * min_sub : 3 * min_sub;
  const double planted[] = {max, -max, min_sub, -max_sub, max_sub};
  for (int i = 0; i < 5; ++i) set(t, {(i * 7) % shape[0], (i * 31 + 3) % shape[1]}, planted[i]);
  return t;
}

TEST(ScaledMm, SubnormalsAndFormatMaximaAreExact) {
  testing::ReferenceOnly ref;
  const Tensor one = Tensor::full({}, 1.0, DType::f32);
  // e4m3fn: smallest subnormal 2^-9, max 448; e5m2: smallest subnormal 2^-16, max 57344. f32 holds every product.
  for (auto [dtype, sub, max] : {std::tuple{DType::f8_e4m3fn, std::ldexp(1.0, -9), 448.0},
                                 std::tuple{DType::f8_e5m2, std::ldexp(1.0, -16), 57344.0}}) {
    Tensor a = Tensor::from_vector({sub, max}, {2, 1}, dtype);
    Tensor b = Tensor::from_vector({sub, max}, {1, 2}, dtype);
    EXPECT_TRUE(all_close(scaled_mm(a, b, one, one, std::nullopt, DType::f32),
                          {sub * sub, sub * max, max * sub, max * max}, 0, 0))
        << dtype_name(dtype);
    // The largest subnormal (e4m3fn 7 * 2^-9, e5m2 3 * 2^-16) times the max, with a scale of 2 on each side.
    const double max_sub = dtype == DType::f8_e4m3fn ? 7 * sub : 3 * sub;
    Tensor two = Tensor::full({1}, 2.0, DType::f32);
    Tensor a_sub = Tensor::from_vector({max_sub}, {1, 1}, dtype), b_max = Tensor::from_vector({max}, {1, 1}, dtype);
    EXPECT_TRUE(all_close(scaled_mm(a_sub, b_max, two, two, std::nullopt, DType::f32),
                          {4 * max_sub * max}, 0, 0))
        << dtype_name(dtype);
  }
  // Overflow of the output type: 57344 * 2 = 114688 is past f16's 65504.
  Tensor big = Tensor::from_vector({57344}, {1, 1}, DType::f8_e5m2);
  Tensor two = Tensor::from_vector({2}, {1, 1}, DType::f8_e5m2);
  EXPECT_EQ(scaled_mm(big, two, one, one, std::nullopt, DType::f16).item(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(scaled_mm(big, two, one, one).item(), 114688.0);   // bf16 default output holds it
  // NaN (e4m3fn has no infinity) propagates along its row.
  Tensor nan_a = Tensor::from_vector({NAN, 1}, {2, 1}, DType::f8_e4m3fn);
  const auto y = scaled_mm(nan_a, Tensor::from_vector({1, 2}, {1, 2}, DType::f8_e4m3fn), one, one).to_vector();
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
  EXPECT_EQ(y[2], 1.0);
  EXPECT_EQ(y[3], 2.0);
}

// Every pair of recipes and every pair of formats equals dequantize (value * its scale element) then matmul.
// The dims that the 128-blocks cut run past 128 (with a partial last block); the other stays small.
TEST(ScaledMm, EveryRecipePairAndFormatEqualsDequantizeThenMatmul) {
  testing::ReferenceOnly ref;
  const std::pair<DType, DType> formats[] = {{DType::f8_e4m3fn, DType::f8_e4m3fn}, {DType::f8_e5m2, DType::f8_e5m2},
                                             {DType::f8_e4m3fn, DType::f8_e5m2}, {DType::f8_e5m2, DType::f8_e4m3fn}};
  const Shape shapes[] = {{130, 136, 3}, {3, 136, 130}};   // {M, K, N}
  uint64_t seed = 1;
  for (const Shape& mkn : shapes) {
    const int64_t m = mkn[0], k = mkn[1], n = mkn[2];
    for (auto [fa, fb] : formats) {
      Tensor a = fp8_operand({m, k}, fa, ++seed), b = fp8_operand({k, n}, fb, ++seed);
      for (Recipe ra : kRecipes)
        for (Recipe rb : kRecipes) {
          Tensor sa = testing::rand_uniform(scale_shape_a(ra, m, k), DType::f32, ++seed, 0.25, 4.0);
          Tensor sb = testing::rand_uniform(scale_shape_b(rb, k, n), DType::f32, ++seed, 1.0 / 1024, 1.0 / 64);
          const Tensor da = dequantize(a, [&](int64_t i, int64_t j) { return scale_for_a(sa, ra, i, j); });
          const Tensor db = dequantize(b, [&](int64_t i, int64_t j) { return scale_for_b(sb, rb, i, j); });
          const Tensor want = matmul(da, db);
          const std::string what = fmt::format("M {} K {} N {} a {} {} b {} {}", m, k, n, dtype_name(fa),
                                               recipe_name(ra), dtype_name(fb), recipe_name(rb));
          EXPECT_TRUE(all_close(scaled_mm(a, b, sa, sb, std::nullopt, DType::f32), want, 1e-6, 1e-9)) << what;
          if (ra == rb) {   // one output type per recipe pair suffices for the rounding check
            Tensor y = scaled_mm(a, b, sa, sb);
            EXPECT_EQ(y.dtype(), DType::bf16);
            EXPECT_TRUE(all_close(y, want, 4e-3, 1e-6)) << what << " bf16";
          }
        }
    }
  }
}

TEST(ScaledMm, BiasAndOutputTypes) {
  testing::ReferenceOnly ref;
  const int64_t m = 5, k = 9, n = 4;
  Tensor a = fp8_operand({m, k}, DType::f8_e4m3fn, 50), b = fp8_operand({k, n}, DType::f8_e4m3fn, 51);
  Tensor sa = testing::rand_uniform({m, 1}, DType::f32, 52, 1.0 / 512, 1.0 / 256);
  Tensor sb = testing::rand_uniform({1, n}, DType::f32, 53, 1.0 / 512, 1.0 / 256);
  const Tensor da = dequantize(a, [&](int64_t i, int64_t) { return el(sa, {i, 0}); });
  const Tensor db = dequantize(b, [&](int64_t, int64_t j) { return el(sb, {0, j}); });
  const Tensor product = matmul(da, db);
  for (DType bias_dtype : {DType::f32, DType::bf16}) {
    Tensor bias = testing::randn({n}, bias_dtype, 54);
    std::vector<double> want = product.to_vector();
    const auto bv = bias.to_vector();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) want[i * n + j] += bv[j];
    EXPECT_TRUE(all_close(scaled_mm(a, b, sa, sb, bias, DType::f32), want, 1e-6, 1e-9)) << dtype_name(bias_dtype);
    EXPECT_TRUE(all_close(scaled_mm(a, b, sa, sb, bias, DType::f16), want, 1e-3, 1e-4)) << dtype_name(bias_dtype);
    Tensor y = scaled_mm(a, b, sa, sb, bias);
    EXPECT_EQ(y.dtype(), DType::bf16);
    EXPECT_TRUE(all_close(y, want, 4e-3, 1e-3)) << dtype_name(bias_dtype);
  }
}

TEST(ScaledMm, TensorwiseShapesAgreeAndLayoutsDoNotMatter) {
  testing::ReferenceOnly ref;
  Tensor a = fp8_operand({6, 5}, DType::f8_e4m3fn, 60), b = fp8_operand({5, 7}, DType::f8_e5m2, 61);
  const Tensor y = scaled_mm(a, b, Tensor::full({}, 0.5, DType::f32), Tensor::full({}, 0.25, DType::f32));
  for (const Shape& s : {Shape{1}, Shape{1, 1}}) {
    Tensor sa = Tensor::full(s, 0.5, DType::f32), sb = Tensor::full(s, 0.25, DType::f32);
    EXPECT_TRUE(testing::bit_equal(scaled_mm(a, b, sa, sb), y)) << shape_string(s);
  }
  Tensor sa = testing::rand_uniform({6, 1}, DType::f32, 62, 0.5, 2);
  Tensor sb = testing::rand_uniform({1, 7}, DType::f32, 63, 0.5, 2);
  EXPECT_TRUE(testing::bit_equal(scaled_mm(testing::non_contiguous(a), testing::non_contiguous(b),
                                           testing::non_contiguous(sa), testing::non_contiguous(sb)),
                                 scaled_mm(a, b, sa, sb)));
  // Broadcast (stride-0) operands and scales.
  Tensor row = fp8_operand({1, 5}, DType::f8_e4m3fn, 64);
  Tensor rows = Tensor::full({6, 1}, 3.0, DType::f32);
  Tensor broadcast_scale = Tensor::full({1}, 3.0, DType::f32).expand({6, 1});
  EXPECT_TRUE(testing::bit_equal(scaled_mm(row.expand({6, 5}), b, broadcast_scale, sb),
                                 scaled_mm(row.expand({6, 5}).contiguous(), b, rows, sb)));
}

// A checkpoint's weight W [N, K] with weight_scale_inv [nb, kb] goes in as views b = W^T, scale_b = scale^T.
TEST(ScaledMm, CheckpointBlockScalesAsTransposedViews) {
  testing::ReferenceOnly ref;
  const int64_t m = 4, k = 200, n = 131;
  Tensor a = fp8_operand({m, k}, DType::f8_e4m3fn, 70);
  Tensor w = fp8_operand({n, k}, DType::f8_e4m3fn, 71);
  Tensor sa = testing::rand_uniform({m, blocks(k)}, DType::f32, 72, 0.01, 0.1);
  Tensor scale_inv = testing::rand_uniform({blocks(n), blocks(k)}, DType::f32, 73, 0.01, 0.1);
  const Tensor da = dequantize(a, [&](int64_t i, int64_t j) { return el(sa, {i, j / 128}); });
  const Tensor dw = dequantize(w, [&](int64_t i, int64_t j) { return el(scale_inv, {i / 128, j / 128}); });
  const Tensor want = matmul(da, dw.transpose(0, 1));
  EXPECT_TRUE(all_close(scaled_mm(a, w.transpose(0, 1), sa, scale_inv.transpose(0, 1), std::nullopt, DType::f32), want,
                        1e-6, 1e-9));
}

TEST(ScaledMm, EmptyDims) {
  testing::ReferenceOnly ref;
  const Tensor one = Tensor::full({}, 1.0, DType::f32);
  const DType e4m3 = DType::f8_e4m3fn;
  EXPECT_EQ(scaled_mm(Tensor::empty({0, 4}, e4m3), Tensor::zeros({4, 3}, e4m3), one, one).shape(), (Shape{0, 3}));
  EXPECT_EQ(scaled_mm(Tensor::zeros({2, 4}, e4m3), Tensor::empty({4, 0}, e4m3), one, one).shape(), (Shape{2, 0}));
  // K = 0: the products are empty sums, so the output is the bias.
  Tensor bias = Tensor::from_vector({1.5, -2}, {2}, DType::f32);
  EXPECT_TRUE(all_close(scaled_mm(Tensor::empty({3, 0}, DType::f8_e5m2), Tensor::empty({0, 2}, DType::f8_e5m2),
                                  Tensor::full({3, 1}, 2.0, DType::f32), one, bias, DType::f32),
                        {1.5, -2, 1.5, -2, 1.5, -2}, 0, 0));
}

TEST(ScaledMm, BadArgumentsNameOpAndArgument) {
  const int64_t m = 3, k = 260, n = 5;   // kb = 3
  Tensor a = Tensor::zeros({m, k}, DType::f8_e4m3fn), b = Tensor::zeros({k, n}, DType::f8_e4m3fn);
  Tensor one = Tensor::full({}, 1.0, DType::f32);
  using testing::throws_with;
  EXPECT_TRUE(throws_with<DTypeError>([&] { scaled_mm(Tensor::zeros({m, k}, DType::bf16), b, one, one); },
                                      {"scaled_mm", "'a'", "float8_e4m3fn", "bfloat16"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { scaled_mm(a, Tensor::zeros({k, n}, DType::f32), one, one); },
                                      {"scaled_mm", "'b'", "float32"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { scaled_mm(a, b, Tensor::full({}, 1.0, DType::f64), one); },
                                      {"scaled_mm", "'scale_a'", "float32", "float64"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { scaled_mm(a, b, one, Tensor::full({1, n}, 1.0, DType::bf16)); },
                                      {"scaled_mm", "'scale_b'", "bfloat16"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { scaled_mm(a, b, Tensor::full({m, 2}, 1.0, DType::f32), one); },
                                      {"scaled_mm", "'scale_a'", "[3, 1]", "[3, 3]", "[1, 3]", "found shape [3, 2]"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { scaled_mm(a, b, Tensor::full({m + 1, 1}, 1.0, DType::f32), one); },
                                      {"scaled_mm", "'scale_a'", "found shape [4, 1]"}));   // a row too many
  EXPECT_TRUE(throws_with<ShapeError>([&] { scaled_mm(a, b, one, Tensor::full({n, 1}, 1.0, DType::f32)); },
                                      {"scaled_mm", "'scale_b'", "[1, 5]", "[3, 5]", "[3, 1]", "found shape [5, 1]"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { scaled_mm(a, b, one, Tensor::full({2}, 1.0, DType::f32)); },
                                      {"scaled_mm", "'scale_b'", "[2]"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { scaled_mm(a, b, Tensor::full({1, 1, 1}, 1.0, DType::f32), one); },
                                      {"scaled_mm", "'scale_a'"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { scaled_mm(a, Tensor::zeros({k + 1, n}, DType::f8_e4m3fn), one, one); },
                                      {"scaled_mm", "'b'", "size 260"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { scaled_mm(a.unsqueeze(0), b, one, one); }, {"scaled_mm", "'a'", "2-D"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { scaled_mm(a, Tensor::zeros({k}, DType::f8_e4m3fn), one, one); },
                                      {"scaled_mm", "'b'", "2-D"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { scaled_mm(a, b, one, one, Tensor::zeros({n}, DType::f16)); },
                                      {"scaled_mm", "'bias'", "float16"}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { scaled_mm(a, b, one, one, Tensor::zeros({n + 1}, DType::f32)); },
                                      {"scaled_mm", "'bias'", "size 5"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { scaled_mm(a, b, one, one, std::nullopt, DType::i32); },
                                      {"scaled_mm", "'out_dtype'", "int32"}));
  EXPECT_TRUE(throws_with<DTypeError>([&] { scaled_mm(a, b, one, one, std::nullopt, DType::f8_e4m3fn); },
                                      {"scaled_mm", "'out_dtype'", "float8_e4m3fn"}));
}

}  // namespace
}  // namespace fourfold
