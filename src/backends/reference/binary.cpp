// Reference add and mul: float64 or complex<double> for floating results, exact int64 for integral ones.
#include <complex>
#include <cstdint>
#include <cstring>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {
namespace {

enum class BinaryOp { add, mul };

int64_t load_integer(const Tensor& t, const int64_t* index) {
  const void* p = t.element_ptr({index, static_cast<size_t>(t.dim())});
  switch (t.dtype()) {
    case DType::i64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    case DType::i32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    default: return *static_cast<const uint8_t*>(p) != 0 ? 1 : 0;   // bool
  }
}

// Integer results wrap on overflow, as PyTorch's integer kernels do in practice; unsigned arithmetic makes
// that defined, and narrowing to int32 afterwards gives the same bits as wrapping int32 arithmetic.
void store_integer(const Tensor& t, const int64_t* index, uint64_t v) {
  void* p = t.element_ptr({index, static_cast<size_t>(t.dim())});
  switch (t.dtype()) {
    case DType::i64: { const int64_t s = static_cast<int64_t>(v); std::memcpy(p, &s, 8); return; }
    case DType::i32: { const int32_t s = static_cast<int32_t>(static_cast<uint32_t>(v)); std::memcpy(p, &s, 4); return; }
    default: *static_cast<uint8_t*>(p) = v != 0 ? 1 : 0; return;   // bool: a + b is "or", a * b is "and"
  }
}

// The textbook product, as c10::complex computes it (no C99 Annex G rescue of inf * NaN cases).
std::complex<double> complex_product(std::complex<double> x, std::complex<double> y) {
  return {x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real()};
}

std::complex<double> get_complex_at(const Tensor& t, const int64_t* index) {
  return load_as_complex(t.dtype(), t.element_ptr({index, static_cast<size_t>(t.dim())}));
}

void binary(const BinaryArgs& args, BinaryOp op) {
  const Tensor& out = args.out;
  const DType dtype = out.dtype();
  if (is_integral(dtype)) {
    // The ops layer has checked that alpha is an integer in the result's range.
    const uint64_t alpha = static_cast<uint64_t>(static_cast<int64_t>(args.alpha));
    for_each_index(out.shape(), [&](const int64_t* index) {
      const uint64_t a = static_cast<uint64_t>(load_integer(args.a, index));
      const uint64_t b = static_cast<uint64_t>(load_integer(args.b, index));
      store_integer(out, index, op == BinaryOp::add ? a + alpha * b : a * b);
    });
  } else if (is_complex(dtype)) {
    for_each_index(out.shape(), [&](const int64_t* index) {
      const std::complex<double> a = get_complex_at(args.a, index), b = get_complex_at(args.b, index);
      const std::complex<double> r = op == BinaryOp::add ? a + args.alpha * b : complex_product(a, b);
      store_from_complex(dtype, out.element_ptr({index, static_cast<size_t>(out.dim())}), r);
    });
  } else {
    for_each_index(out.shape(), [&](const int64_t* index) {
      const double a = get(args.a, index), b = get(args.b, index);
      put(out, index, op == BinaryOp::add ? a + args.alpha * b : a * b);
    });
  }
}

}  // namespace

void add(const BinaryArgs& args) { binary(args, BinaryOp::add); }
void mul(const BinaryArgs& args) { binary(args, BinaryOp::mul); }

}  // namespace fourfold::ref
