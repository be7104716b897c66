// grouped_mm and grouped_mm_out on the reference tier: every case against one matmul per group, edges, errors.
#include <string>

#include <fmt/format.h>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;

enum class Kind { a2d_b3d, a3d_b2d, a2d_b2d, a3d_b3d };

Tensor offsets(const std::vector<int>& v) {
  return Tensor::from_values(v, {static_cast<int64_t>(v.size())}, DType::i32);
}

// The expected result built group by group with float64 matmul on slices; `fill` where no group writes.
Tensor per_group_matmul(Kind kind, const Tensor& a_in, const Tensor& b_in, const std::vector<int>& offs,
                        double fill) {
  const Tensor a = a_in.to(DType::f64), b = b_in.to(DType::f64);
  Tensor out;
  switch (kind) {
    case Kind::a2d_b3d: out = Tensor::full({a.size(0), b.size(2)}, fill, DType::f64); break;
    case Kind::a3d_b2d: out = Tensor::full({a.size(1), b.size(1)}, fill, DType::f64); break;
    case Kind::a2d_b2d:
      out = Tensor::full({static_cast<int64_t>(offs.size()), a.size(0), b.size(1)}, fill, DType::f64);
      break;
    case Kind::a3d_b3d: return bmm(a, b);
  }
  for (size_t g = 0; g < offs.size(); ++g) {
    const int64_t start = g == 0 ? 0 : offs[g - 1], len = offs[g] - start;
    const auto gi = static_cast<int64_t>(g);
    switch (kind) {
      case Kind::a2d_b3d: out.narrow(0, start, len).copy_from(matmul(a.narrow(0, start, len), b.select(0, gi))); break;
      case Kind::a3d_b2d: out.narrow(1, start, len).copy_from(matmul(a.select(0, gi), b.narrow(1, start, len))); break;
      case Kind::a2d_b2d: out.select(0, gi).copy_from(matmul(a.narrow(1, start, len), b.narrow(0, start, len))); break;
      case Kind::a3d_b3d: break;
    }
  }
  return out;
}

struct Case {
  Kind kind;
  Shape a, b;
  const char* name;
};
// G = 3 groups; the sliced extent (rows of a, columns of b, or K) is 12.
const Case kCases[] = {
    {Kind::a2d_b3d, {12, 5}, {3, 5, 4}, "2Dx3D"},
    {Kind::a3d_b2d, {3, 4, 5}, {5, 12}, "3Dx2D"},
    {Kind::a2d_b2d, {4, 12}, {12, 3}, "2Dx2D"},
    {Kind::a3d_b3d, {3, 4, 5}, {3, 5, 2}, "3Dx3D"},
};
struct Groups {
  std::vector<int> offs;
  const char* name;
};
const Groups kGroups[] = {
    {{4, 8, 12}, "even"},
    {{1, 11, 12}, "skewed"},
    {{0, 5, 5}, "empty first and last, 7 past the end"},
    {{0, 0, 0}, "all empty"},
};

TEST(GroupedMm, HandComputed2Dx3D) {
  testing::ReferenceOnly ref;
  // Rows 0-1 use b[0] = identity, row 2 uses b[1] = 2 * identity, row 3 is past the end.
  Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}, DType::f32);
  Tensor b = Tensor::from_vector({1, 0, 0, 1, 2, 0, 0, 2}, {2, 2, 2}, DType::f32);
  EXPECT_TRUE(all_close(grouped_mm(a, b, offsets({2, 3})), {1, 2, 3, 4, 10, 12, 0, 0}, 0, 0));
}

TEST(GroupedMm, EveryCaseEqualsOneMatmulPerGroup) {
  testing::ReferenceOnly ref;
  uint64_t seed = 100;
  for (const Case& c : kCases)
    for (const Groups& groups : kGroups) {
      if (c.kind == Kind::a3d_b3d && &groups != &kGroups[0]) continue;   // no offs: one run is enough
      const OptTensor offs = c.kind == Kind::a3d_b3d ? OptTensor() : OptTensor(offsets(groups.offs));
      for (DType dtype : {DType::f64, DType::f32, DType::bf16}) {
        const std::string what = fmt::format("{} {} {}", c.name, groups.name, dtype_name(dtype));
        Tensor a = randn(c.a, dtype, ++seed), b = randn(c.b, dtype, ++seed);
        const double tol = dtype == DType::f64 ? 1e-12 : dtype == DType::f32 ? 1e-6 : 4e-3;
        const Tensor want = per_group_matmul(c.kind, a, b, groups.offs, 0.0);
        Tensor got = grouped_mm(a, b, offs);
        EXPECT_EQ(got.dtype(), dtype) << what;
        EXPECT_TRUE(all_close(got, want, tol, tol)) << what;
        // Strided inputs give the same bits.
        EXPECT_TRUE(testing::bit_equal(grouped_mm(testing::non_contiguous(a), testing::non_contiguous(b), offs), got))
            << what;
        if (dtype == DType::bf16) {   // f32 output of bf16 inputs: rounded once to f32, not to bf16
          Tensor wide = grouped_mm(a, b, offs, DType::f32);
          EXPECT_EQ(wide.dtype(), DType::f32);
          EXPECT_TRUE(all_close(wide, want, 1e-6, 1e-6)) << what;
        }
      }
    }
}

TEST(GroupedMmOut, LeavesRowsAndColumnsPastTheLastOffsetAsTheyWere) {
  testing::ReferenceOnly ref;
  const double sentinel = 7.0;
  uint64_t seed = 200;
  for (const Case& c : kCases)
    for (const Groups& groups : kGroups) {
      if (c.kind == Kind::a3d_b3d && &groups != &kGroups[0]) continue;
      const OptTensor offs = c.kind == Kind::a3d_b3d ? OptTensor() : OptTensor(offsets(groups.offs));
      const std::string what = fmt::format("{} {}", c.name, groups.name);
      Tensor a = randn(c.a, DType::f32, ++seed), b = randn(c.b, DType::f32, ++seed);
      // 2Dx2D writes every group (an empty one as zeros), so the sentinel survives only in 2Dx3D / 3Dx2D.
      const Tensor want = per_group_matmul(c.kind, a, b, groups.offs, sentinel);
      Tensor out = Tensor::full(want.shape(), sentinel, DType::f32);
      grouped_mm_out(out, a, b, offs);
      EXPECT_TRUE(all_close(out, want, 1e-6, 1e-6)) << what;
      // A strided out is written through its strides.
      Tensor strided = testing::non_contiguous(Tensor::full(want.shape(), sentinel, DType::f32));
      grouped_mm_out(strided, a, b, offs);
      EXPECT_TRUE(all_close(strided, want, 1e-6, 1e-6)) << what << " strided out";
    }
}

TEST(GroupedMm, EmptyDims) {
  testing::ReferenceOnly ref;
  // No groups at all (2Dx2D with empty offs), no rows, K = 0.
  EXPECT_EQ(grouped_mm(randn({2, 4}, DType::f32, 1), randn({4, 3}, DType::f32, 2), offsets({})).shape(),
            (Shape{0, 2, 3}));
  EXPECT_EQ(grouped_mm(Tensor::empty({0, 4}, DType::f32), randn({2, 4, 3}, DType::f32, 3), offsets({0, 0})).shape(),
            (Shape{0, 3}));
  Tensor k0 = grouped_mm(Tensor::empty({2, 3, 0}, DType::f32), Tensor::empty({2, 0, 4}, DType::f32));
  EXPECT_TRUE(all_close(k0, std::vector<double>(24, 0.0), 0, 0));
}

TEST(GroupedMm, BadArgumentsNameOpAndArgument) {
  Tensor a2 = Tensor::zeros({12, 5}, DType::f32), b3 = Tensor::zeros({3, 5, 4}, DType::f32);
  Tensor a3 = Tensor::zeros({3, 4, 5}, DType::f32);
  auto throws_value = [&](const Tensor& a, const Tensor& b, const OptTensor& offs, std::vector<std::string> frags) {
    return testing::throws_with<ValueError>([&] { grouped_mm(a, b, offs); }, frags);
  };
  EXPECT_TRUE(throws_value(a2, b3, offsets({4, 3, 12}), {"grouped_mm", "'offs'", "non-decreasing", "offs[1] = 3"}));
  EXPECT_TRUE(throws_value(a2, b3, offsets({-1, 3, 12}), {"grouped_mm", "'offs'", "non-negative", "offs[0] = -1"}));
  EXPECT_TRUE(throws_value(a2, b3, offsets({4, 8, 13}), {"grouped_mm", "'offs'", "<= 12", "offs[2] = 13"}));
  EXPECT_TRUE(throws_value(a3, Tensor::zeros({5, 12}, DType::f32), offsets({4, 8, 13}), {"'offs'", "<= 12"}));
  EXPECT_TRUE(throws_value(Tensor::zeros({4, 12}, DType::f32), Tensor::zeros({12, 3}, DType::f32), offsets({13}),
                           {"'offs'", "<= 12"}));
  EXPECT_TRUE(throws_value(a3, Tensor::zeros({3, 5, 2}, DType::f32), offsets({1, 2, 3}),
                           {"grouped_mm", "'offs'", "3-D"}));
  EXPECT_TRUE(throws_value(a2, b3, std::nullopt, {"grouped_mm", "'offs'", "int32"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { grouped_mm(a2, b3, Tensor::from_values(std::vector<int>{4, 8, 12}, {3}, DType::i64)); },
      {"grouped_mm", "'offs'", "int32", "int64"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { grouped_mm(a2, b3, Tensor::from_values(std::vector<int>{4, 8, 12}, {3}, DType::f32)); },
      {"grouped_mm", "'offs'", "float32"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { grouped_mm(a2, b3, offsets({4, 12})); },
                                               {"grouped_mm", "'offs'", "size 3", "[2]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { grouped_mm(a2, b3, Tensor::from_values(std::vector<int>{4, 8, 12}, {1, 3}, DType::i32)); },
      {"grouped_mm", "'offs'", "1-D"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { grouped_mm(Tensor::zeros({1, 1, 12, 5}, DType::f32), b3); },
                                               {"grouped_mm", "'a'", "2-D or 3-D"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { grouped_mm(a2, Tensor::zeros({5}, DType::f32), offsets({1})); },
                                               {"grouped_mm", "'b'", "2-D or 3-D"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { grouped_mm(a2, Tensor::zeros({3, 6, 4}, DType::f32), offsets({4, 8, 12})); },
      {"grouped_mm", "'b'", "size 5"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { grouped_mm(a3, Tensor::zeros({2, 5, 2}, DType::f32)); },
                                               {"grouped_mm", "'b'", "size 3"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { grouped_mm(Tensor::zeros({12, 5}, DType::i32), b3, offsets({4, 8, 12})); },
      {"grouped_mm", "'a'", "int32"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { grouped_mm(a2, Tensor::zeros({3, 5, 4}, DType::bf16), offsets({4, 8, 12})); },
      {"grouped_mm", "'b'", "bfloat16"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { grouped_mm(a2, b3, offsets({4, 8, 12}), DType::bf16); },
                                               {"grouped_mm", "'out_dtype'", "bfloat16"}));
  Tensor wrong_shape = Tensor::zeros({12, 3}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { grouped_mm_out(wrong_shape, a2, b3, offsets({4, 8, 12})); },
                                               {"grouped_mm", "'out'", "[12, 4]", "[12, 3]"}));
  Tensor wrong_dtype = Tensor::zeros({12, 4}, DType::f16);
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { grouped_mm_out(wrong_dtype, a2, b3, offsets({4, 8, 12})); },
                                               {"grouped_mm", "'out'", "float16"}));
  Tensor undefined;
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { grouped_mm_out(undefined, a2, b3, offsets({4, 8, 12})); },
                                               {"grouped_mm", "'out'"}));
}

}  // namespace
}  // namespace fourfold
