#include "support/test_support.h"

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

namespace fourfold::testing {

Tensor randn(const Shape& shape, DType dtype, uint64_t seed, double stddev) {
  Tensor t = Tensor::empty(shape, dtype);
  t.fill_normal(seed, 0.0, stddev);
  return t;
}

Tensor rand_uniform(const Shape& shape, DType dtype, uint64_t seed, double low, double high) {
  Tensor t = Tensor::empty(shape, dtype);
  t.fill_uniform(seed, low, high);
  return t;
}

double rounding_tolerance(DType dtype, double f64_tolerance) {
  switch (dtype) {
    case DType::bf16: return 1e-2;
    case DType::f16: return 2e-3;
    case DType::f32: return 1e-6;
    default: return f64_tolerance;
  }
}

double one_ulp_tolerance(DType dtype) {
  switch (dtype) {
    case DType::bf16: return std::ldexp(1.0, -8);
    case DType::f16: return std::ldexp(1.0, -10);
    case DType::f32: return std::ldexp(1.0, -23);
    default: return 1e-12;
  }
}

Tolerance product_tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64: return {1e-12, 1e-12};
    case DType::f32: return {1e-6, 1e-6};
    case DType::f16: return {1e-3, 1e-4};
    default: return {4e-3, 1e-3};   // bf16
  }
}

Tensor random_bits(const Shape& shape, DType dtype, uint64_t seed) {
  Tensor t = Tensor::empty(shape, dtype);
  std::mt19937_64 rng(seed);
  auto* p = static_cast<uint8_t*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(dtype == DType::boolean ? rng() & 1 : rng());
  return t;
}

Tensor non_contiguous(const Tensor& t) {
  if (t.dim() == 0) return t;
  // Reverse the dims in memory and pad the (new) innermost dim by 3 elements.
  Shape reversed(t.shape().rbegin(), t.shape().rend());
  Shape padded = reversed;
  padded.back() += 3;
  Tensor buffer = Tensor::full(padded, 12345.0, t.dtype());
  Tensor inner = buffer.narrow(-1, 1, reversed.back());
  std::vector<int> dims(t.dim());
  for (int i = 0; i < t.dim(); ++i) dims[i] = t.dim() - 1 - i;
  Tensor view = inner.permute(dims);
  view.copy_from(t);
  return view;
}

namespace {

bool close(double a, double b, double rtol, double atol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= atol + rtol * std::fabs(b);
}

std::string index_string(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % std::max<int64_t>(shape[d], 1);
    flat /= std::max<int64_t>(shape[d], 1);
  }
  return shape_string(idx);
}

::testing::AssertionResult compare(const Shape& shape, const std::vector<double>& a, const std::vector<double>& b,
                                   double rtol, double atol) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  std::ostringstream os;
  int bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (close(a[i], b[i], rtol, atol)) continue;
    if (bad < 8) os << "\n  at " << index_string(shape, static_cast<int64_t>(i)) << ": " << a[i] << " vs " << b[i];
    ++bad;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << a.size() << " elements differ (rtol " << rtol << ", atol "
                                       << atol << "):" << os.str();
}

}  // namespace

::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "shapes differ: " << shape_string(actual.shape()) << " vs "
                                         << shape_string(expected.shape());
  if (is_complex(actual.dtype()) || is_complex(expected.dtype())) {
    const auto a = actual.to_complex_vector(), b = expected.to_complex_vector();
    std::vector<double> ar, br;
    for (size_t i = 0; i < a.size(); ++i) {
      ar.push_back(a[i].real()); ar.push_back(a[i].imag());
      br.push_back(b[i].real()); br.push_back(b[i].imag());
    }
    Shape s = actual.shape();
    s.push_back(2);
    return compare(s, ar, br, rtol, atol);
  }
  return compare(actual.shape(), actual.to_vector(), expected.to_vector(), rtol, atol);
}

::testing::AssertionResult all_close(const Tensor& actual, const std::vector<double>& expected, double rtol,
                                     double atol) {
  return compare(actual.shape(), actual.to_vector(), expected, rtol, atol);
}

::testing::AssertionResult bit_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return ::testing::AssertionFailure() << "dtype or shape differ: " << a.describe() << " vs " << b.describe();
  const Tensor ac = a.contiguous(), bc = b.contiguous();
  const auto* pa = static_cast<const uint8_t*>(ac.data());
  const auto* pb = static_cast<const uint8_t*>(bc.data());
  const size_t es = dtype_size(a.dtype());
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::memcmp(pa + i * es, pb + i * es, es) != 0)
      return ::testing::AssertionFailure() << "first difference at flat index " << i << " ("
                                           << index_string(a.shape(), i) << ")";
  return ::testing::AssertionSuccess();
}

Tensor finite_difference(const std::function<double(const Tensor&)>& f, const Tensor& x, double h) {
  Tensor base = x.to(DType::f64).contiguous().clone();
  Tensor grad = Tensor::zeros(base.shape(), DType::f64);
  auto* p = base.data_as<double>();
  auto* g = grad.data_as<double>();
  for (int64_t i = 0; i < base.numel(); ++i) {
    const double saved = p[i];
    p[i] = saved + h;
    const double up = f(base);
    p[i] = saved - h;
    const double down = f(base);
    p[i] = saved;
    g[i] = (up - down) / (2 * h);
  }
  return grad;
}

double dot(const Tensor& a, const Tensor& b) {
  const auto va = a.to_vector(), vb = b.to_vector();
  double s = 0.0;
  for (size_t i = 0; i < va.size() && i < vb.size(); ++i) s += va[i] * vb[i];
  return s;
}

}  // namespace fourfold::testing
