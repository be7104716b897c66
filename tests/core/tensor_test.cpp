// Tensor views and copies: strides, view/reshape rules, broadcasting, copies across dtypes, seeded fills.
#include <numeric>

#include "fourfold/parallel.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

std::vector<double> iota(int n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

TEST(Tensor, ContiguousStridesAndMetadata) {
  Tensor t = Tensor::zeros({2, 3, 4}, DType::bf16);
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.nbytes(), 48u);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % kAllocationAlignment, 0u);
}

TEST(Tensor, PermuteTransposeNarrowSliceSelect) {
  Tensor t = Tensor::from_vector(iota(24), {2, 3, 4}, DType::f32);
  Tensor p = t.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_FALSE(p.is_contiguous());
  const int64_t idx[3] = {3, 1, 2};
  EXPECT_EQ(load_as_double(DType::f32, p.element_ptr(idx)), 1 * 12 + 2 * 4 + 3);
  EXPECT_EQ(t.transpose(0, 2).contiguous().to_vector(), p.permute({0, 2, 1}).contiguous().to_vector());
  EXPECT_EQ(t.narrow(2, 1, 2).to_vector(), (std::vector<double>{1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22}));
  EXPECT_EQ(t.slice(2, 0, 4, 2).select(0, 1).to_vector(), (std::vector<double>{12, 14, 16, 18, 20, 22}));
  EXPECT_EQ(t.slice(1, -2, 100).shape(), (Shape{2, 2, 4}));   // PyTorch clamping
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { t.narrow(1, 2, 2); }, {"narrow", "start/length"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { t.permute({0, 0, 1}); }, {"permute", "permutation"}));
}

TEST(Tensor, ViewFollowsLayoutReshapeCopiesWhenItMust) {
  Tensor t = Tensor::from_vector(iota(24), {2, 3, 4}, DType::f32);
  Tensor v = t.view({6, -1});
  EXPECT_EQ(v.shape(), (Shape{6, 4}));
  EXPECT_EQ(v.storage(), t.storage());
  Tensor tt = t.transpose(1, 2);   // [2, 4, 3]
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { tt.view({8, 3}); }, {"view", "reshape"}));
  Tensor r = tt.reshape({8, 3});
  EXPECT_NE(r.storage(), t.storage());
  EXPECT_EQ(r.to_vector(), tt.contiguous().to_vector());
  // A view that merges dims which stay contiguous within a permuted tensor.
  Tensor q = t.permute({1, 0, 2});                  // [3, 2, 4], last dim contiguous
  EXPECT_EQ(q.view({3, 2, 2, 2}).storage(), t.storage());
  EXPECT_EQ(Tensor::full({}, 5.0, DType::f32).reshape({1, 1}).item(), 5.0);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { t.view({5, -1}); }, {"view", "24 elements"}));
}

TEST(Tensor, ExpandBroadcastsWithStrideZero) {
  Tensor t = Tensor::from_vector({1, 2, 3}, {3, 1}, DType::f32);
  Tensor e = t.expand({2, 3, 4});
  EXPECT_EQ(e.strides(), (Shape{0, 1, 0}));
  EXPECT_EQ(e.contiguous().to_vector()[5], 2.0);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { t.expand({2, 4}); }, {"expand", "broadcasts"}));
  EXPECT_EQ(broadcast_shapes({3, 1}, {2, 1, 5}, "test"), (Shape{2, 3, 5}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([] { broadcast_shapes({3}, {4}, "add"); }, {"add", "[3] and [4]"}));
}

TEST(Tensor, CopyBetweenLayoutsAndDtypes) {
  Tensor src = testing::randn({3, 5, 7}, DType::f32, 1);
  for (DType d : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::complex64}) {
    Tensor nc = testing::non_contiguous(src.to(d));
    EXPECT_FALSE(nc.is_contiguous());
    Tensor back = nc.to(DType::f64);
    const double tol = (d == DType::f16) ? 1e-3 : (d == DType::bf16 ? 8e-3 : 0);
    EXPECT_TRUE(testing::all_close(back, src, tol, 0)) << dtype_name(d);
  }
  // Broadcasting copy into a strided destination.
  Tensor dst = Tensor::zeros({4, 6}, DType::f32).slice(1, 0, 6, 2);
  dst.copy_from(Tensor::from_vector({1, 2, 3}, {3}, DType::f32));
  EXPECT_EQ(dst.to_vector(), (std::vector<double>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
  // Complex to complex through a permutation keeps both parts.
  Tensor c = Tensor::from_complex_vector({{1, 2}, {3, 4}, {5, 6}, {7, 8}}, {2, 2});
  EXPECT_EQ(c.transpose(0, 1).contiguous().to_complex_vector()[1], std::complex<double>(5, 6));
}

TEST(Tensor, FillAndEmptyTensors) {
  Tensor t = Tensor::full({2, 3}, 2.5, DType::bf16);
  for (double v : t.to_vector()) EXPECT_EQ(v, 2.5);
  Tensor e = Tensor::empty({0, 3}, DType::f32);
  e.fill(1.0);
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector().empty());
  Tensor b = Tensor::full({3}, 7.0, DType::boolean);
  EXPECT_EQ(b.to_vector(), (std::vector<double>{1, 1, 1}));
}

TEST(Tensor, SeededFillsGiveTheSameBytesWhateverTheThreadCount) {
  const int saved = num_threads();
  set_num_threads(1);
  Tensor a = testing::randn({300, 257}, DType::f32, 42);
  Tensor u1 = testing::rand_uniform({1000, 33}, DType::bf16, 7, -1, 1);
  set_num_threads(2);
  Tensor b = testing::randn({300, 257}, DType::f32, 42);
  Tensor u2 = testing::rand_uniform({1000, 33}, DType::bf16, 7, -1, 1);
  set_num_threads(saved);
  EXPECT_TRUE(testing::bit_equal(a, b));
  EXPECT_TRUE(testing::bit_equal(u1, u2));
  EXPECT_FALSE(testing::bit_equal(a, testing::randn({300, 257}, DType::f32, 43)));
  // The sample looks like N(0, 1) and U(-1, 1).
  double sum = 0, sq = 0;
  for (double v : a.to_vector()) { sum += v; sq += v * v; }
  const double n = static_cast<double>(a.numel());
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(sq / n, 1.0, 0.03);
  for (double v : u1.to_vector()) { EXPECT_GE(v, -1.0); EXPECT_LE(v, 1.0); }
}

TEST(Tensor, FromVectorChecksCountAndBlobSharesMemory) {
  EXPECT_TRUE(testing::throws_with<ShapeError>([] { Tensor::from_vector({1, 2}, {3}, DType::f32); },
                                                {"from_vector", "3 values", "2 values"}));
  auto buffer = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  Tensor t = Tensor::from_blob(buffer->data(), {2, 2}, DType::f32, buffer);
  (*buffer)[3] = 9;
  EXPECT_EQ(t.to_vector()[3], 9.0);
  EXPECT_FALSE(t.storage()->from_allocator());
  EXPECT_TRUE(testing::throws_with<ShapeError>([] { Tensor::empty(Shape(9, 1), DType::f32); }, {"rank <= 8"}));
}

TEST(Tensor, StridedBlobViewsTheElementsItsStridesReach) {
  // A [2, 3] column slice of a [2, 5] row-major buffer, transposed: strides (1, 5) over 2 + 2 * 5 elements.
  auto buffer = std::make_shared<std::vector<float>>(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor t = Tensor::from_blob(buffer->data() + 1, {3, 2}, {1, 5}, DType::f32, buffer);
  EXPECT_EQ(t.to_vector(), (std::vector<double>{1, 6, 2, 7, 3, 8}));
  EXPECT_EQ(t.storage()->nbytes(), 8 * sizeof(float));
  EXPECT_FALSE(t.is_contiguous());
  Tensor broadcast = Tensor::from_blob(buffer->data(), {4, 2}, {0, 1}, DType::f32, buffer);
  EXPECT_EQ(broadcast.to_vector(), (std::vector<double>{0, 1, 0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(Tensor::from_blob(buffer->data(), {0, 3}, {3, 1}, DType::f32, buffer).storage()->nbytes(), 0u);
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { Tensor::from_blob(buffer->data(), {2, 2}, {1}, DType::f32, buffer); }, {"from_blob", "strides", "2 strides"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { Tensor::from_blob(buffer->data(), {2, 2}, {-1, 1}, DType::f32, buffer); }, {"non-negative"}));
}

}  // namespace
}  // namespace fourfold
