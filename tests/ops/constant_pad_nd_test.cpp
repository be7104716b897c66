// constant_pad_nd and its backward on the reference tier: hand cases, element formulas over every dtype and
// rank, crops, layouts, a large inner plane, finite differences, and bad arguments.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::bit_equal;

using testing::kAllDTypes;

using testing::random_bits;

// The definition, element by element and byte by byte: out[i] = x[i - before] where that is inside x, else
// the value as x's dtype encodes it.
::testing::AssertionResult matches_pad_formula(const Tensor& x, const std::vector<int64_t>& pads, double value,
                                               const Tensor& out) {
  const int rank = x.dim();
  Shape expected_shape = x.shape();
  std::vector<int64_t> before(rank, 0);
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    const int d = rank - 1 - static_cast<int>(i);
    before[d] = pads[2 * i];
    expected_shape[d] += pads[2 * i] + pads[2 * i + 1];
  }
  if (out.shape() != expected_shape || out.dtype() != x.dtype())
    return ::testing::AssertionFailure() << "got " << out.describe() << ", expected shape "
                                         << shape_string(expected_shape);
  const Tensor fill = Tensor::full({}, value, x.dtype());
  const size_t es = dtype_size(x.dtype());
  int64_t bad = 0;
  std::string first;
  std::vector<int64_t> src(rank);
  for_each_index(out.shape(), [&](const int64_t* dst) {
    bool inside = true;
    for (int d = 0; d < rank; ++d) {
      src[d] = dst[d] - before[d];
      if (src[d] < 0 || src[d] >= x.size(d)) inside = false;
    }
    const void* want = inside ? x.element_ptr(src) : fill.data();
    if (std::memcmp(out.element_ptr({dst, static_cast<size_t>(rank)}), want, es) != 0 && bad++ == 0)
      first = shape_string(Shape(dst, dst + rank));
  });
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " elements differ, first at " << first;
}

TEST(ConstantPadNd, HandComputedCases) {
  testing::ReferenceOnly ref;
  Tensor v = Tensor::from_vector({1, 2, 3}, {3}, DType::f32);
  EXPECT_TRUE(all_close(constant_pad_nd(v, {2, 1}, 9), {9, 9, 1, 2, 3, 9}, 0, 0));
  EXPECT_TRUE(all_close(constant_pad_nd(v, {-1, 2}, 7), {2, 3, 7, 7}, 0, 0));      // mixed signs
  EXPECT_TRUE(all_close(constant_pad_nd(v, {-1, -1}), {2}, 0, 0));                 // crop both sides
  EXPECT_TRUE(all_close(constant_pad_nd(v, {0, 0}), {1, 2, 3}, 0, 0));
  EXPECT_EQ(constant_pad_nd(v, {-2, -1}).shape(), (Shape{0}));                     // size 0 is allowed
  EXPECT_EQ(constant_pad_nd(v, {-3, 1}, 5).shape(), (Shape{1}));                   // crop all, pad one
  EXPECT_TRUE(all_close(constant_pad_nd(v, {-3, 1}, 5), {5}, 0, 0));

  Tensor m = Tensor::from_vector({1, 2, 3, 4}, {2, 2}, DType::f32);
  // Pairs run from the last dim backwards: (left, right) of dim 1, then (top, bottom) of dim 0.
  Tensor p = constant_pad_nd(m, {1, 0, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{3, 3}));
  EXPECT_TRUE(all_close(p, {0, 1, 2, 0, 3, 4, 0, 0, 0}, 0, 0));
  Tensor q = constant_pad_nd(m, {0, -1, 1, 0}, -1);
  EXPECT_EQ(q.shape(), (Shape{3, 1}));
  EXPECT_TRUE(all_close(q, {-1, 1, 3}, 0, 0));
  // Pads shorter than 2 * rank leave the leading dims alone.
  Tensor c = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 1, 3}, DType::f32);
  EXPECT_TRUE(all_close(constant_pad_nd(c, {1, 0}, 8), {8, 1, 2, 3, 8, 4, 5, 6}, 0, 0));
  // A 0-D tensor takes no pads and comes back as a copy.
  Tensor s = Tensor::full({}, 3.5, DType::f32);
  Tensor sp = constant_pad_nd(s, {});
  EXPECT_EQ(sp.dim(), 0);
  EXPECT_EQ(sp.item(), 3.5);
}

TEST(ConstantPadNd, PadThenCropIsTheIdentityBitForBit) {
  testing::ReferenceOnly ref;
  uint64_t seed = 100;
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : {Shape{5}, Shape{2, 3}, Shape{3, 1, 4}, Shape{2, 3, 2, 5}}) {
      Tensor x = random_bits(shape, dtype, ++seed);
      std::vector<int64_t> pads;
      for (size_t d = 0; d < shape.size(); ++d) {
        pads.push_back(static_cast<int64_t>((seed + d) % 3));
        pads.push_back(static_cast<int64_t>((seed + 2 * d) % 4));
      }
      Tensor padded = constant_pad_nd(x, pads, 1.0);
      EXPECT_TRUE(matches_pad_formula(x, pads, 1.0, padded)) << dtype_name(dtype) << " " << shape_string(shape);
      std::vector<int64_t> negated;
      for (int64_t p : pads) negated.push_back(-p);
      EXPECT_TRUE(bit_equal(constant_pad_nd(padded, negated), x)) << dtype_name(dtype) << " " << shape_string(shape);
      EXPECT_TRUE(bit_equal(constant_pad_nd_backward(padded, pads), x)) << dtype_name(dtype);
    }
  }
}

TEST(ConstantPadNd, MixedSignsFollowTheFormulaForEveryDtype) {
  testing::ReferenceOnly ref;
  const std::vector<std::vector<int64_t>> cases = {
      {-1, 2}, {2, -1, -1, 0}, {0, 0, -2, 3, 1, -1}, {-2, -2, 1, 1, 0, 0}, {3, -4, 0, 0, -1, -1}};
  uint64_t seed = 200;
  for (DType dtype : kAllDTypes) {
    Tensor x = random_bits({3, 4, 5}, dtype, ++seed);
    for (const auto& pads : cases)
      EXPECT_TRUE(matches_pad_formula(x, pads, -2.0, constant_pad_nd(x, pads, -2.0))) << dtype_name(dtype);
  }
}

TEST(ConstantPadNd, ValueIsConvertedToTheDtype) {
  testing::ReferenceOnly ref;
  auto fill_of = [](DType dtype, double value) {
    return constant_pad_nd(Tensor::zeros({1}, dtype), {0, 1}, value).narrow(0, 1, 1);
  };
  EXPECT_EQ(fill_of(DType::i32, 2.7).item(), 2.0);        // truncation toward zero, as PyTorch
  EXPECT_EQ(fill_of(DType::i64, -2.7).item(), -2.0);
  EXPECT_EQ(fill_of(DType::boolean, 0.5).item(), 1.0);    // nonzero is true
  EXPECT_EQ(fill_of(DType::boolean, 0.0).item(), 0.0);
  EXPECT_EQ(fill_of(DType::bf16, 1.0 + 1.0 / 512).item(), 1.0);   // rounds to nearest even
  EXPECT_EQ(fill_of(DType::f8_e4m3fn, 1000.0).item(), 448.0);     // finite overflow saturates (dtype.h)
  EXPECT_EQ(fill_of(DType::f8_e5m2, 3.0).item(), 3.0);
  EXPECT_TRUE(std::isinf(fill_of(DType::f16, 1e6).item()));
  EXPECT_TRUE(std::isnan(fill_of(DType::f32, NAN).item()));
  const auto c = fill_of(DType::complex64, -1.5).to_complex_vector();
  EXPECT_EQ(c[0], std::complex<double>(-1.5, 0.0));
  EXPECT_EQ(fill_of(DType::i64, -9223372036854775808.0).item(), -9223372036854775808.0);
}

TEST(ConstantPadNd, EveryRankFromOneToEight) {
  testing::ReferenceOnly ref;
  for (int rank = 1; rank <= kMaxRank; ++rank) {
    Shape shape(rank);
    std::vector<int64_t> pads;
    for (int i = 0; i < rank; ++i) {
      shape[i] = 2 + (i % 2);
      // Pair i (dim rank-1-i): (-1, 1), (0, -1), (1, 0) in turn: crops, pads and both, one element each.
      pads.push_back(i % 3 - 1);
      pads.push_back((i + 2) % 3 - 1);
    }
    Tensor x = random_bits(shape, DType::f32, 300 + rank);
    Tensor out = constant_pad_nd(x, pads, 0.25);
    EXPECT_TRUE(matches_pad_formula(x, pads, 0.25, out)) << "rank " << rank;
    // Only some trailing dims padded.
    std::vector<int64_t> fewer(pads.begin(), pads.begin() + 2 * ((rank + 1) / 2));
    EXPECT_TRUE(matches_pad_formula(x, fewer, 0.25, constant_pad_nd(x, fewer, 0.25))) << "rank " << rank;
  }
}

TEST(ConstantPadNd, EmptyDims) {
  testing::ReferenceOnly ref;
  EXPECT_EQ(constant_pad_nd(Tensor::empty({0, 3}, DType::f32), {1, 1}).shape(), (Shape{0, 5}));
  // Padding an empty dim creates elements, all of them the value.
  Tensor a = constant_pad_nd(Tensor::empty({2, 0}, DType::f32), {1, 2}, 4);
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_TRUE(all_close(a, std::vector<double>(6, 4.0), 0, 0));
  Tensor b = constant_pad_nd(Tensor::empty({0, 3}, DType::i32), {0, 0, 1, 1}, 7);
  EXPECT_TRUE(all_close(b, std::vector<double>(6, 7.0), 0, 0));
  EXPECT_EQ(constant_pad_nd(Tensor::zeros({2, 3}, DType::f32), {-1, -2}).shape(), (Shape{2, 0}));
  EXPECT_EQ(constant_pad_nd_backward(Tensor::zeros({2, 0}, DType::f32), {-1, -2}).shape(), (Shape{2, 3}));
}

TEST(ConstantPadNd, NonContiguousAndExpandedInputs) {
  testing::ReferenceOnly ref;
  const std::vector<int64_t> pads = {1, -1, -1, 2, 2, 0};
  for (DType dtype : kAllDTypes) {
    Tensor x = random_bits({3, 4, 5}, dtype, 400);
    Tensor nc = testing::non_contiguous(x);
    ASSERT_FALSE(nc.is_contiguous());
    EXPECT_TRUE(bit_equal(constant_pad_nd(nc, pads, 3), constant_pad_nd(x, pads, 3))) << dtype_name(dtype);
    // Stride-0 dims: a row broadcast over dim 0 and a scalar broadcast over everything.
    Tensor row = random_bits({1, 1, 5}, dtype, 401);
    Tensor expanded = row.expand({3, 4, 5});
    EXPECT_TRUE(bit_equal(constant_pad_nd(expanded, pads, 3), constant_pad_nd(expanded.contiguous(), pads, 3)));
    EXPECT_TRUE(matches_pad_formula(expanded, pads, 3, constant_pad_nd(expanded, pads, 3)));
    Tensor scalar = random_bits({}, dtype, 402).expand({2, 3, 2});
    EXPECT_TRUE(bit_equal(constant_pad_nd(scalar, pads, 3), constant_pad_nd(scalar.contiguous(), pads, 3)));
    EXPECT_TRUE(bit_equal(constant_pad_nd_backward(nc, {-1, 1}), constant_pad_nd_backward(x, {-1, 1})));
  }
}

// [1, C, T, H, W] with H * W = 2^16 and beyond: another backend corrupted pads once the inner plane passed
// 2^16 elements. Checked against values that encode their own position, not against another pad.
TEST(ConstantPadNd, FiveDimensionalWithInnerPlaneOfTwoToTheSixteenAndBeyond) {
  testing::ReferenceOnly ref;
  struct Case { int64_t h, w; std::vector<int64_t> pads; };
  const Case cases[] = {{256, 256, {1, 2, 3, 1, 1, 0}},
                        {257, 256, {1, 2, 3, 1, 1, 0}},
                        {257, 256, {-1, 2, 0, -3, 2, 1}},
                        {256, 257, {2, -2, 1, 1, 0, 0}}};
  for (const Case& c : cases) {
    const int64_t t_in = 2;
    for (DType dtype : {DType::i32, DType::f32, DType::bf16}) {
      // i32 and f32 hold every position exactly; bf16 holds position mod 251 exactly (integers <= 256).
      const int64_t modulus = dtype == DType::bf16 ? 251 : std::numeric_limits<int64_t>::max();
      std::vector<double> values(static_cast<size_t>(t_in * c.h * c.w));
      for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(static_cast<int64_t>(i) % modulus);
      Tensor x = Tensor::from_vector(values, {1, 1, t_in, c.h, c.w}, dtype);
      const double fill = -5.0;
      const Tensor out = constant_pad_nd(x, c.pads, fill);
      const int64_t bw = c.pads[0], bh = c.pads[2], bt = c.pads[4];
      const int64_t to = t_in + c.pads[4] + c.pads[5], ho = c.h + c.pads[2] + c.pads[3], wo = c.w + c.pads[0] + c.pads[1];
      ASSERT_EQ(out.shape(), (Shape{1, 1, to, ho, wo}));
      const std::vector<double> got = out.to_vector();
      int64_t bad = 0;
      for (int64_t t = 0; t < to; ++t)
        for (int64_t h = 0; h < ho; ++h)
          for (int64_t w = 0; w < wo; ++w) {
            const int64_t ti = t - bt, hi = h - bh, wi = w - bw;
            const bool inside = ti >= 0 && ti < t_in && hi >= 0 && hi < c.h && wi >= 0 && wi < c.w;
            const double want =
                inside ? static_cast<double>((ti * c.h * c.w + hi * c.w + wi) % modulus) : fill;
            if (got[static_cast<size_t>((t * ho + h) * wo + w)] != want) ++bad;
          }
      EXPECT_EQ(bad, 0) << dtype_name(dtype) << " H=" << c.h << " W=" << c.w;
    }
  }
}

TEST(ConstantPadNd, BackwardMatchesFiniteDifferences) {
  testing::ReferenceOnly ref;
  Tensor x = testing::randn({2, 3, 4}, DType::f64, 500);
  for (const std::vector<int64_t>& pads :
       std::vector<std::vector<int64_t>>{{1, 2}, {1, -1, 2, 0, -1, 1}, {-2, -1, 0, 0}, {0, 0, 0, 0, 1, 1}}) {
    const Tensor y = constant_pad_nd(x, pads, 0.5);
    const Tensor g = testing::randn(y.shape(), DType::f64, 501);
    auto f = [&](const Tensor& xi) { return testing::dot(constant_pad_nd(xi, pads, 0.5), g); };
    const Tensor analytic = constant_pad_nd_backward(g, pads);
    ASSERT_EQ(analytic.shape(), x.shape());
    // The pad is linear, so the central difference is exact up to the rounding of f.
    EXPECT_TRUE(all_close(analytic, testing::finite_difference(f, x), 1e-8, 1e-8));
  }
}

TEST(ConstantPadNd, BadArgumentsNameOpAndArgument) {
  Tensor x = Tensor::zeros({2, 3}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { constant_pad_nd(x, {1, 2, 3}); },
                                               {"constant_pad_nd", "'pads'", "even", "3 entries"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { constant_pad_nd(x, {1, 1, 1, 1, 1, 1}); },
                                               {"constant_pad_nd", "'pads'", "at most 4", "6 entries"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { constant_pad_nd(Tensor::full({}, 1, DType::f32), {0, 0}); },
                                               {"constant_pad_nd", "'pads'", "at most 0"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { constant_pad_nd(x, {-2, -2}); },
                                               {"constant_pad_nd", "'pads'", "dim 1", "found -1"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { constant_pad_nd(x, {0, 0, -1, -2}); },
                                               {"constant_pad_nd", "'pads'", "dim 0", "found -1"}));
  // A crop past the dim's size, even when the other side's pad brings the total back up (PyTorch refuses it).
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { constant_pad_nd(x, {-4, 5}); },
                                               {"constant_pad_nd", "'pads'", "dim 1", "crop of 4"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { constant_pad_nd(Tensor::zeros({2}, DType::i32), {1, 1}, 3e9); },
                                               {"constant_pad_nd", "'value'", "int32"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { constant_pad_nd(Tensor::zeros({2}, DType::i64), {1, 1}, NAN); },
                                               {"constant_pad_nd", "'value'", "int64"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { constant_pad_nd(Tensor(), {1, 1}); }, {"constant_pad_nd", "'x'"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { constant_pad_nd_backward(x, {2, 2}); },
                                               {"constant_pad_nd_backward", "'pads'", "dim 1", "negated"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { constant_pad_nd_backward(x, {1}); },
                                               {"constant_pad_nd_backward", "'pads'", "even"}));
  // Rank 9 cannot even be built: Tensor refuses it before the op sees it.
  EXPECT_TRUE(testing::throws_with<ShapeError>([] { Tensor::zeros(Shape(9, 1), DType::f32); }, {"rank <= 8"}));
}

}  // namespace
}  // namespace fourfold
