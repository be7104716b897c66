// matmul and bmm on the reference tier: explicit-loop and complex real-block identities, layouts, edges, errors.
#include <cmath>
#include <complex>
#include <limits>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;
using C = std::complex<double>;

double el(const Tensor& t, std::vector<int64_t> index) { return load_as_double(t.dtype(), t.element_ptr(index)); }
C cel(const Tensor& t, std::vector<int64_t> index) { return load_as_complex(t.dtype(), t.element_ptr(index)); }

using Tol = testing::Tolerance;
Tol tolerance(DType dtype) { return testing::product_tolerance(dtype); }

Tensor random_complex(const Shape& shape, uint64_t seed) {
  Tensor re = randn(shape, DType::f32, seed), im = randn(shape, DType::f32, seed + 1000);
  const auto r = re.to_vector(), i = im.to_vector();
  std::vector<C> v;
  for (size_t j = 0; j < r.size(); ++j) v.emplace_back(r[j], i[j]);
  return Tensor::from_complex_vector(v, shape);
}

TEST(Matmul, HandComputed) {
  testing::ReferenceOnly ref;
  Tensor a = Tensor::from_vector({1, 2, 3, 4}, {2, 2}, DType::f32);
  Tensor b = Tensor::from_vector({5, 6, 7, 8}, {2, 2}, DType::f32);
  EXPECT_TRUE(all_close(matmul(a, b), {19, 22, 43, 50}, 0, 0));
  Tensor u = Tensor::from_vector({1, 2, 3}, {3}, DType::f32), v = Tensor::from_vector({4, 5, 6}, {3}, DType::f32);
  Tensor d = matmul(u, v);
  EXPECT_EQ(d.dim(), 0);
  EXPECT_EQ(d.item(), 32.0);
  Tensor c = matmul(Tensor::from_complex_vector({C(1, 2)}, {1, 1}), Tensor::from_complex_vector({C(3, -1)}, {1, 1}));
  EXPECT_EQ(c.to_complex_vector()[0], C(5, 5));
}

TEST(Matmul, OneAndTwoDimensionalCasesEqualExplicitLoops) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    const Tol tol = tolerance(dtype);
    const int64_t m = 3, k = 5, n = 4;
    Tensor a = randn({m, k}, dtype, 1), b = randn({k, n}, dtype, 2);
    Tensor u = randn({k}, dtype, 3), v = randn({k}, dtype, 4);
    std::vector<double> mm, vm, mv;
    double dot = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += el(a, {i, p}) * el(b, {p, j});
        mm.push_back(s);
      }
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += el(u, {p}) * el(b, {p, j});
      vm.push_back(s);
    }
    for (int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += el(a, {i, p}) * el(v, {p});
      mv.push_back(s);
    }
    for (int64_t p = 0; p < k; ++p) dot += el(u, {p}) * el(v, {p});
    for (bool strided : {false, true}) {
      auto in = [&](const Tensor& t) { return strided ? testing::non_contiguous(t) : t; };
      Tensor r_mm = matmul(in(a), in(b)), r_vm = matmul(in(u), in(b)), r_mv = matmul(in(a), in(v));
      Tensor r_dot = matmul(in(u), in(v));
      EXPECT_EQ(r_mm.shape(), (Shape{m, n}));
      EXPECT_EQ(r_vm.shape(), (Shape{n}));
      EXPECT_EQ(r_mv.shape(), (Shape{m}));
      EXPECT_EQ(r_dot.shape(), (Shape{}));
      EXPECT_EQ(r_mm.dtype(), dtype);
      EXPECT_TRUE(all_close(r_mm, mm, tol.rtol, tol.atol)) << dtype_name(dtype);
      EXPECT_TRUE(all_close(r_vm, vm, tol.rtol, tol.atol)) << dtype_name(dtype);
      EXPECT_TRUE(all_close(r_mv, mv, tol.rtol, tol.atol)) << dtype_name(dtype);
      EXPECT_TRUE(all_close(r_dot, {dot}, tol.rtol, tol.atol)) << dtype_name(dtype);
    }
  }
}

TEST(Matmul, BatchedAndBroadcastCasesEqualExplicitLoops) {
  testing::ReferenceOnly ref;
  const int64_t m = 2, k = 3, n = 5;
  // [2, 1, M, K] x [3, K, N] -> [2, 3, M, N]: both operands broadcast.
  Tensor a = randn({2, 1, m, k}, DType::f32, 5), b = randn({3, k, n}, DType::f32, 6);
  std::vector<double> want;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) {
          double s = 0;
          for (int64_t p = 0; p < k; ++p) s += el(a, {i, 0, r, p}) * el(b, {j, p, c});
          want.push_back(s);
        }
  for (bool strided : {false, true}) {
    Tensor y = strided ? matmul(testing::non_contiguous(a), testing::non_contiguous(b)) : matmul(a, b);
    EXPECT_EQ(y.shape(), (Shape{2, 3, m, n}));
    EXPECT_TRUE(all_close(y, want, 1e-6, 1e-6)) << "strided " << strided;
  }
  // [M, K] x [4, K, N]: a 2-D operand broadcast over b's batch.
  Tensor a2 = randn({m, k}, DType::f64, 7), b3 = randn({4, k, n}, DType::f64, 8);
  std::vector<double> want2;
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += el(a2, {r, p}) * el(b3, {j, p, c});
        want2.push_back(s);
      }
  EXPECT_TRUE(all_close(matmul(a2, b3), want2, 1e-12, 1e-12));
  // 1-D x 3-D -> [4, N] and 3-D x 1-D -> [4, M].
  Tensor u = randn({k}, DType::f64, 9);
  std::vector<double> want_vb, want_bv;
  Tensor a3 = randn({4, m, k}, DType::f64, 10);
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t c = 0; c < n; ++c) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += el(u, {p}) * el(b3, {j, p, c});
      want_vb.push_back(s);
    }
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t r = 0; r < m; ++r) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += el(a3, {j, r, p}) * el(u, {p});
      want_bv.push_back(s);
    }
  Tensor vb = matmul(u, b3), bv = matmul(a3, u);
  EXPECT_EQ(vb.shape(), (Shape{4, n}));
  EXPECT_EQ(bv.shape(), (Shape{4, m}));
  EXPECT_TRUE(all_close(vb, want_vb, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(bv, want_bv, 1e-12, 1e-12));
  // An operand already expanded by the caller (stride 0 batch) gives what its contiguous copy gives.
  Tensor e = randn({1, m, k}, DType::f32, 11).expand({4, m, k});
  Tensor b4 = randn({4, k, n}, DType::f32, 12);
  EXPECT_TRUE(testing::bit_equal(matmul(e, b4), matmul(e.contiguous(), b4)));
  EXPECT_TRUE(testing::bit_equal(bmm(e, b4), matmul(e.contiguous(), b4)));
}

TEST(Bmm, EqualsExplicitLoopsForEveryDtype) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    const Tol tol = tolerance(dtype);
    Tensor a = randn({3, 2, 7}, dtype, 13), b = randn({3, 7, 1}, dtype, 14);
    std::vector<double> want;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t r = 0; r < 2; ++r) {
        double s = 0;
        for (int64_t p = 0; p < 7; ++p) s += el(a, {i, r, p}) * el(b, {i, p, 0});
        want.push_back(s);
      }
    EXPECT_TRUE(all_close(bmm(a, b), want, tol.rtol, tol.atol)) << dtype_name(dtype);
    EXPECT_TRUE(all_close(bmm(testing::non_contiguous(a), testing::non_contiguous(b)), want, tol.rtol, tol.atol));
  }
}

// C = A B in complex equals the real product of the 2x2-block expansions [[Re, -Im], [Im, Re]].
Tensor real_blocks(const Tensor& z) {
  const int64_t batch = z.size(0), rows = z.size(1), cols = z.size(2);
  Tensor r = Tensor::empty({batch, 2 * rows, 2 * cols}, DType::f64);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const C v = cel(z, {bi, i, j});
        const double block[2][2] = {{v.real(), -v.imag()}, {v.imag(), v.real()}};
        for (int64_t p = 0; p < 2; ++p)
          for (int64_t q = 0; q < 2; ++q)
            store_from_double(DType::f64, r.element_ptr(std::vector<int64_t>{bi, 2 * i + p, 2 * j + q}), block[p][q]);
      }
  return r;
}

TEST(Matmul, Complex64EqualsRealBlockExpansion) {
  testing::ReferenceOnly ref;
  Tensor a = random_complex({2, 3, 5}, 15), b = random_complex({2, 5, 4}, 16);
  Tensor real = matmul(real_blocks(a), real_blocks(b));
  std::vector<double> want;   // interleaved (re, im), the layout all_close uses for complex tensors
  for (int64_t bi = 0; bi < 2; ++bi)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        want.push_back(el(real, {bi, 2 * i, 2 * j}));
        want.push_back(el(real, {bi, 2 * i + 1, 2 * j}));
        EXPECT_NEAR(el(real, {bi, 2 * i, 2 * j}), el(real, {bi, 2 * i + 1, 2 * j + 1}), 1e-12);   // a block again
      }
  for (const Tensor& got : {matmul(a, b), bmm(a, b), matmul(testing::non_contiguous(a), testing::non_contiguous(b))}) {
    ASSERT_EQ(got.dtype(), DType::complex64);
    const auto z = got.to_complex_vector();
    ASSERT_EQ(z.size() * 2, want.size());
    for (size_t i = 0; i < z.size(); ++i) {
      EXPECT_NEAR(z[i].real(), want[2 * i], 1e-5 * (1 + std::fabs(want[2 * i])));
      EXPECT_NEAR(z[i].imag(), want[2 * i + 1], 1e-5 * (1 + std::fabs(want[2 * i + 1])));
    }
  }
  // Broadcast and 1-D complex operands follow the real rules.
  Tensor v = random_complex({5}, 17);
  EXPECT_EQ(matmul(a, v).shape(), (Shape{2, 3}));
  EXPECT_EQ(matmul(v, v).shape(), (Shape{}));
  const auto vv = matmul(v, v).to_complex_vector()[0];
  C s = 0;
  for (int64_t p = 0; p < 5; ++p) s += cel(v, {p}) * cel(v, {p});   // no conjugation
  EXPECT_NEAR(vv.real(), s.real(), 1e-5);
  EXPECT_NEAR(vv.imag(), s.imag(), 1e-5);
}

TEST(Matmul, EmptyDimsAndSizeOne) {
  testing::ReferenceOnly ref;
  // K = 0: empty sums are zeros.
  EXPECT_TRUE(all_close(matmul(Tensor::empty({2, 0}, DType::f32), Tensor::empty({0, 3}, DType::f32)),
                        std::vector<double>(6, 0.0), 0, 0));
  EXPECT_EQ(matmul(Tensor::empty({0, 4}, DType::f32), randn({4, 3}, DType::f32, 18)).shape(), (Shape{0, 3}));
  EXPECT_EQ(matmul(randn({0, 2, 4}, DType::f32, 19), randn({4, 3}, DType::f32, 20)).shape(), (Shape{0, 2, 3}));
  EXPECT_EQ(bmm(Tensor::empty({0, 2, 4}, DType::f32), Tensor::empty({0, 4, 3}, DType::f32)).shape(), (Shape{0, 2, 3}));
  EXPECT_EQ(matmul(Tensor::empty({0}, DType::f32), Tensor::empty({0}, DType::f32)).item(), 0.0);
  Tensor one = matmul(Tensor::full({1, 1}, 3.0, DType::bf16), Tensor::full({1, 1}, -2.0, DType::bf16));
  EXPECT_EQ(one.item(), -6.0);
}

TEST(Matmul, InfAndNaNPropagate) {
  testing::ReferenceOnly ref;
  const double inf = std::numeric_limits<double>::infinity();
  Tensor a = Tensor::from_vector({inf, 0, NAN, 1}, {2, 2}, DType::f32);
  Tensor b = Tensor::from_vector({1, 0, 0, 1}, {2, 2}, DType::f32);
  const auto y = matmul(a, b).to_vector();
  EXPECT_EQ(y[0], inf);
  EXPECT_TRUE(std::isnan(y[1]));   // inf * 0
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_TRUE(std::isnan(y[3]));
}

TEST(Matmul, BadArgumentsNameOpAndArgument) {
  Tensor a = Tensor::zeros({2, 3}, DType::f32), b = Tensor::zeros({3, 4}, DType::f32);
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { matmul(Tensor::zeros({2, 3}, DType::i32), b); },
                                               {"matmul", "'a'", "int32"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { matmul(a, Tensor::zeros({3, 4}, DType::f8_e5m2)); },
                                               {"matmul", "'b'", "float8_e5m2"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { matmul(a, Tensor::zeros({3, 4}, DType::bf16)); },
                                               {"matmul", "'b'", "bfloat16", "float32"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { matmul(a, Tensor::zeros({3, 4}, DType::complex64)); },
                                               {"matmul", "'b'", "complex64"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { matmul(Tensor::zeros({}, DType::f32), b); }, {"matmul", "'a'"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { matmul(a, Tensor::zeros({}, DType::f32)); }, {"matmul", "'b'"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { matmul(a, Tensor::zeros({4, 4}, DType::f32)); },
                                               {"matmul", "'b'", "size 3", "[4, 4]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { matmul(Tensor::zeros({3}, DType::f32), Tensor::zeros({4}, DType::f32)); }, {"matmul", "'b'", "size 3"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { matmul(Tensor::zeros({2, 2, 3}, DType::f32), Tensor::zeros({3, 3, 4}, DType::f32)); },
      {"matmul", "broadcast", "[2]", "[3]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { bmm(a, b); }, {"bmm", "'a'", "3-D", "[2, 3]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { bmm(Tensor::zeros({1, 2, 3}, DType::f32), Tensor::zeros({2, 3, 4}, DType::f32)); },
      {"bmm", "'b'", "size 1", "[2, 3, 4]"}));   // no broadcasting in bmm
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { bmm(Tensor::zeros({2, 2, 3}, DType::f32), Tensor::zeros({2, 2, 4}, DType::f32)); },
      {"bmm", "'b'", "size 3"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>(
      [&] { bmm(Tensor::zeros({1, 2, 3}, DType::i64), Tensor::zeros({1, 3, 4}, DType::i64)); },
      {"bmm", "'a'", "int64"}));
}

}  // namespace
}  // namespace fourfold
