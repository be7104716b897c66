// add and mul on the reference tier: hand cases, broadcasting, type promotion, exact integers, edge values, errors.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::bit_equal;
using testing::randn;

// int64 values are written as bits: from_vector goes through double, which cannot hold 2^53 + 1.
Tensor int64_tensor(const std::vector<int64_t>& values, const Shape& shape) {
  Tensor t = Tensor::empty(shape, DType::i64);
  for (size_t i = 0; i < values.size(); ++i) t.data_as<int64_t>()[i] = values[i];
  return t;
}

std::vector<int64_t> int64_values(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_as<int64_t>(), c.data_as<int64_t>() + c.numel());
}

TEST(Binary, HandComputedAddWithAlphaAndMul) {
  testing::ReferenceOnly ref;
  Tensor a = Tensor::from_vector({1, 2, 3}, {3}, DType::f32);
  Tensor b = Tensor::from_vector({4, 5, 6}, {3}, DType::f32);
  EXPECT_TRUE(all_close(add(a, b), {5, 7, 9}, 0, 0));
  EXPECT_TRUE(all_close(add(a, b, 2.0), {9, 12, 15}, 0, 0));
  EXPECT_TRUE(all_close(add(a, b, -0.5), {-1, -0.5, 0}, 0, 0));
  EXPECT_TRUE(all_close(mul(a, b), {4, 10, 18}, 0, 0));
  EXPECT_EQ(add(a, b).dtype(), DType::f32);
}

TEST(Binary, BroadcastShapes) {
  testing::ReferenceOnly ref;
  Tensor col = Tensor::from_vector({1, 2, 3}, {3, 1}, DType::f32);
  Tensor row = Tensor::from_vector({10, 20, 30, 40}, {1, 4}, DType::f32);
  Tensor sum = add(col, row);
  ASSERT_EQ(sum.shape(), (Shape{3, 4}));
  EXPECT_TRUE(all_close(sum, {11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}, 0, 0));
  EXPECT_TRUE(all_close(mul(row, col), {10, 20, 30, 40, 20, 40, 60, 80, 30, 60, 90, 120}, 0, 0));

  Tensor v = Tensor::from_vector({1, 2, 3, 4, 5}, {5}, DType::f32);
  Tensor m = Tensor::from_vector({0, 0, 0, 0, 0, 1, 1, 1, 1, 1}, {2, 5}, DType::f32);
  Tensor vm = add(v, m);
  ASSERT_EQ(vm.shape(), (Shape{2, 5}));
  EXPECT_TRUE(all_close(vm, {1, 2, 3, 4, 5, 2, 3, 4, 5, 6}, 0, 0));
  EXPECT_TRUE(all_close(add(m, v, 10.0), {10, 20, 30, 40, 50, 11, 21, 31, 41, 51}, 0, 0));

  Tensor s = Tensor::full({}, 3.0, DType::f32);
  Tensor ms = mul(s, m);
  ASSERT_EQ(ms.shape(), (Shape{2, 5}));
  EXPECT_TRUE(all_close(ms, {0, 0, 0, 0, 0, 3, 3, 3, 3, 3}, 0, 0));
  Tensor ss = add(s, s);
  EXPECT_EQ(ss.dim(), 0);
  EXPECT_EQ(ss.item(), 6.0);

  EXPECT_EQ(add(Tensor::empty({0, 3}, DType::f32), Tensor::zeros({1, 3}, DType::f32)).shape(), (Shape{0, 3}));
  EXPECT_EQ(mul(Tensor::empty({2, 0}, DType::f32), Tensor::zeros({1}, DType::f32)).shape(), (Shape{2, 0}));
  EXPECT_EQ(add(Tensor::empty({0}, DType::f32), s).shape(), (Shape{0}));
  EXPECT_EQ(mul(Tensor::empty({4, 0, 2}, DType::i32), Tensor::zeros({0, 1}, DType::i32)).shape(), (Shape{4, 0, 2}));
}

// Every layout gives the same bits, and each element is a + alpha * b (or a * b) rounded once to the dtype.
TEST(Binary, AnyLayoutIsOneRoundingOfTheExactResult) {
  testing::ReferenceOnly ref;
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    Tensor a = randn({3, 5, 7}, dtype, 21);
    Tensor b = randn({3, 5, 7}, dtype, 22);
    const auto va = a.to_vector(), vb = b.to_vector();
    std::vector<double> sum(va.size()), prod(va.size());
    for (size_t i = 0; i < va.size(); ++i) {
      sum[i] = va[i] + 0.75 * vb[i];
      prod[i] = va[i] * vb[i];
    }
    const Tensor expected_sum = Tensor::from_vector(sum, a.shape(), dtype);
    const Tensor expected_prod = Tensor::from_vector(prod, a.shape(), dtype);
    EXPECT_TRUE(bit_equal(add(a, b, 0.75), expected_sum)) << dtype_name(dtype);
    EXPECT_TRUE(bit_equal(mul(a, b), expected_prod)) << dtype_name(dtype);
    const Tensor na = testing::non_contiguous(a), nb = testing::non_contiguous(b);
    ASSERT_FALSE(na.is_contiguous());
    EXPECT_TRUE(bit_equal(add(na, nb, 0.75), expected_sum)) << dtype_name(dtype);
    EXPECT_TRUE(bit_equal(mul(na, b), expected_prod)) << dtype_name(dtype);
    // An expanded (stride-0) operand is the same as its materialized copy.
    Tensor row = randn({1, 1, 7}, dtype, 23);
    const Tensor wide = row.expand({3, 5, 7});
    EXPECT_TRUE(bit_equal(mul(a, wide), mul(a, wide.contiguous()))) << dtype_name(dtype);
    EXPECT_TRUE(bit_equal(add(wide, a), add(row, a))) << dtype_name(dtype);
  }
}

TEST(Binary, TypePromotion) {
  testing::ReferenceOnly ref;
  const Tensor bf = Tensor::from_vector({1.5, -2}, {2}, DType::bf16);
  const Tensor f = Tensor::from_vector({0.25, 4}, {2}, DType::f32);
  const Tensor h = Tensor::from_vector({1, 2}, {2}, DType::f16);
  const Tensor i = Tensor::from_vector({3, -7}, {2}, DType::i32);
  const Tensor l = Tensor::from_vector({5, 6}, {2}, DType::i64);
  const Tensor d = Tensor::from_vector({0.5, 0.5}, {2}, DType::f64);
  const Tensor t = Tensor::from_vector({1, 0}, {2}, DType::boolean);

  Tensor r = add(bf, f);
  EXPECT_EQ(r.dtype(), DType::f32);
  EXPECT_TRUE(all_close(r, {1.75, 2}, 0, 0));
  EXPECT_EQ(mul(bf, h).dtype(), DType::f32);
  r = mul(i, f);
  EXPECT_EQ(r.dtype(), DType::f32);
  EXPECT_TRUE(all_close(r, {0.75, -28}, 0, 0));
  r = add(i, l);
  EXPECT_EQ(r.dtype(), DType::i64);
  EXPECT_TRUE(all_close(r, {8, -1}, 0, 0));
  EXPECT_EQ(add(l, d).dtype(), DType::f64);
  r = add(t, i, 3.0);
  EXPECT_EQ(r.dtype(), DType::i32);
  EXPECT_TRUE(all_close(r, {10, -21}, 0, 0));
  r = mul(h, t);
  EXPECT_EQ(r.dtype(), DType::f16);
  EXPECT_TRUE(all_close(r, {1, 0}, 0, 0));

  // A 0-D operand only decides the type when its category is higher (torch.result_type).
  EXPECT_EQ(add(bf, Tensor::full({}, 1.0, DType::f32)).dtype(), DType::bf16);
  EXPECT_EQ(mul(Tensor::full({}, 2.0, DType::f64), h).dtype(), DType::f16);
  EXPECT_EQ(add(i, Tensor::full({}, 1.0, DType::i64)).dtype(), DType::i32);
  EXPECT_EQ(add(i, Tensor::full({}, 1.5, DType::f32)).dtype(), DType::f32);
  EXPECT_EQ(mul(t, Tensor::full({}, 2.0, DType::i64)).dtype(), DType::i64);
  EXPECT_EQ(mul(f, Tensor::from_complex_vector({{0, 1}}, {})).dtype(), DType::complex64);
  EXPECT_EQ(add(Tensor::full({}, 1.0, DType::f32), Tensor::full({}, 1.0, DType::f16)).dtype(), DType::f32);
  EXPECT_EQ(add(Tensor::full({1}, 1.0, DType::f16), Tensor::full({}, 1.0, DType::f32)).dtype(), DType::f16);
}

TEST(Binary, BoolOperandsGiveBool) {
  testing::ReferenceOnly ref;
  const Tensor p = Tensor::from_vector({1, 1, 0, 0}, {4}, DType::boolean);
  const Tensor q = Tensor::from_vector({1, 0, 1, 0}, {4}, DType::boolean);
  Tensor m = mul(p, q);
  EXPECT_EQ(m.dtype(), DType::boolean);
  EXPECT_TRUE(all_close(m, {1, 0, 0, 0}, 0, 0));
  Tensor s = add(p, q);
  EXPECT_EQ(s.dtype(), DType::boolean);
  EXPECT_TRUE(all_close(s, {1, 1, 1, 0}, 0, 0));
  EXPECT_TRUE(all_close(add(p, q, 0.0), {1, 1, 0, 0}, 0, 0));
  // Stored bytes stay 0 or 1 (true + true must not become 2).
  const Tensor c = s.contiguous();
  for (int64_t k = 0; k < 4; ++k) EXPECT_LE(c.data_as<uint8_t>()[k], 1);
}

TEST(Binary, IntegersAreExactPast2To53AndWrap) {
  testing::ReferenceOnly ref;
  const int64_t big = (int64_t{1} << 53) + 1;   // not a double
  const Tensor a = int64_tensor({big, -big, big}, {3});
  const Tensor b = int64_tensor({2, 1, 3}, {3});
  EXPECT_EQ(int64_values(add(a, b)), (std::vector<int64_t>{big + 2, -big + 1, big + 3}));
  EXPECT_EQ(int64_values(add(a, b, 3.0)), (std::vector<int64_t>{big + 6, -big + 3, big + 9}));
  EXPECT_EQ(int64_values(add(a, b, -1.0)), (std::vector<int64_t>{big - 2, -big - 1, big - 3}));
  EXPECT_EQ(int64_values(mul(a, b)), (std::vector<int64_t>{2 * big, -big, 3 * big}));
  // int32 operands promote to int64 without passing through double either.
  EXPECT_EQ(int64_values(add(Tensor::from_vector({1, -1}, {2}, DType::i32), int64_tensor({big, big}, {2}))),
            (std::vector<int64_t>{big + 1, big - 1}));
  // Overflow wraps around, as PyTorch's integer kernels do.
  const int64_t max = std::numeric_limits<int64_t>::max(), min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(int64_values(add(int64_tensor({max}, {1}), int64_tensor({1}, {1}))), (std::vector<int64_t>{min}));
  Tensor i32 = add(Tensor::from_vector({2147483647}, {1}, DType::i32), Tensor::from_vector({1}, {1}, DType::i32));
  EXPECT_EQ(i32.dtype(), DType::i32);
  EXPECT_EQ(i32.contiguous().data_as<int32_t>()[0], std::numeric_limits<int32_t>::min());
  // Non-contiguous and broadcast integer operands.
  const Tensor m = int64_tensor({big, 1, 2, 3, 4, 5}, {2, 3});
  Tensor r = mul(testing::non_contiguous(m), int64_tensor({1, 2, 3}, {3}));
  EXPECT_EQ(int64_values(r), (std::vector<int64_t>{big, 2, 6, 3, 8, 15}));
}

TEST(Binary, NaNAndInfinityPropagate) {
  testing::ReferenceOnly ref;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    const Tensor a = Tensor::from_vector({nan, inf, inf, -inf, 1, 0}, {6}, dtype);
    const Tensor b = Tensor::from_vector({1, -inf, 1, -inf, nan, inf}, {6}, dtype);
    EXPECT_TRUE(all_close(add(a, b), {nan, nan, inf, -inf, nan, inf}, 0, 0)) << dtype_name(dtype);
    EXPECT_TRUE(all_close(mul(a, b), {nan, -inf, inf, inf, nan, nan}, 0, 0)) << dtype_name(dtype);
  }
  // f16 overflow rounds to inf on store.
  const Tensor h = Tensor::from_vector({60000}, {1}, DType::f16);
  EXPECT_TRUE(all_close(add(h, h), {inf}, 0, 0));
}

TEST(Binary, Complex64) {
  testing::ReferenceOnly ref;
  using C = std::complex<double>;
  const Tensor a = Tensor::from_complex_vector({C(1, 2), C(0, 1)}, {2});
  const Tensor b = Tensor::from_complex_vector({C(3, 4), C(0, 1)}, {2});
  Tensor p = mul(a, b);
  EXPECT_EQ(p.dtype(), DType::complex64);
  EXPECT_EQ(p.to_complex_vector(), (std::vector<C>{C(-5, 10), C(-1, 0)}));
  EXPECT_EQ(add(a, b, 2.0).to_complex_vector(), (std::vector<C>{C(7, 10), C(0, 3)}));
  Tensor real = Tensor::from_vector({2, -1}, {2}, DType::f32);
  Tensor q = mul(real, b);
  EXPECT_EQ(q.dtype(), DType::complex64);
  EXPECT_EQ(q.to_complex_vector(), (std::vector<C>{C(6, 8), C(0, -1)}));
  EXPECT_EQ(add(Tensor::from_vector({1, 2}, {2}, DType::i32), a).to_complex_vector(),
            (std::vector<C>{C(2, 2), C(2, 1)}));
  EXPECT_EQ(mul(testing::non_contiguous(a.reshape({2, 1})), b.reshape({1, 2})).to_complex_vector(),
            (std::vector<C>{C(-5, 10), C(-2, 1), C(-4, 3), C(-1, 0)}));
}

TEST(Binary, BadArgumentsNameOpAndArgument) {
  const Tensor f3 = Tensor::zeros({3}, DType::f32);
  const Tensor f4 = Tensor::zeros({4}, DType::f32);
  EXPECT_TRUE(testing::throws_with<ShapeError>([&] { add(f3, f4); }, {"add", "[3]", "[4]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { mul(Tensor::zeros({2, 3}, DType::f32), Tensor::zeros({3, 2}, DType::f32)); }, {"mul", "[2, 3]", "[3, 2]"}));
  EXPECT_TRUE(testing::throws_with<ShapeError>(
      [&] { add(Tensor::zeros({0}, DType::f32), Tensor::zeros({2}, DType::f32)); }, {"add", "[0]", "[2]"}));
  const Tensor fp8 = Tensor::zeros({3}, DType::f8_e4m3fn);
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { add(fp8, f3); }, {"add", "'a'", "float8_e4m3fn"}));
  EXPECT_TRUE(testing::throws_with<DTypeError>([&] { mul(f3, fp8); }, {"mul", "'b'", "float8_e4m3fn"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { add(Tensor(), f3); }, {"add", "'a'", "undefined"}));
  const Tensor i = Tensor::zeros({3}, DType::i32);
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { add(i, i, 1.5); }, {"add", "'alpha'", "1.5", "int32"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { add(i, i, 3e9); }, {"add", "'alpha'", "int32"}));
  const Tensor t = Tensor::zeros({3}, DType::boolean);
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { add(t, t, 2.0); }, {"add", "'alpha'", "bool"}));
  EXPECT_NO_THROW(add(i, f3, 1.5));   // a floating result takes any alpha
}

}  // namespace
}  // namespace fourfold
