// Generic silu as x / (1 + exp(-x)) in passes: negate, exp, add one, reciprocal, multiply by x; silu_mul adds
// one more pass, the multiply by up.
#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {

// silu(-inf) = -inf * (1 / inf) = -inf * 0 = NaN, as the reference's -inf / inf.
Tensor silu_f32(const Tensor& x) {
  const int64_t n = x.numel();
  Tensor neg = empty_f32(x.shape()), e = empty_f32(x.shape()), denom = empty_f32(x.shape());
  Tensor sig = empty_f32(x.shape()), y = empty_f32(x.shape());
  unary(Unary::neg, x.data_as<float>(), neg.data_as<float>(), n);
  unary(Unary::exp, neg.data_as<float>(), e.data_as<float>(), n);
  affine(e.data_as<float>(), 1.0f, 1.0f, denom.data_as<float>(), n);
  unary(Unary::reciprocal, denom.data_as<float>(), sig.data_as<float>(), n);
  binary(Binary::mul, x.data_as<float>(), sig.data_as<float>(), Broadcast::none, y.data_as<float>(), 1, n);
  return y;
}

namespace {

bool silu_covers(const UnaryArgs& a) { return computes(a.x.dtype()); }

void silu(const UnaryArgs& a) {
  if (a.x.numel() == 0) return;
  from_f32(silu_f32(to_f32(a.x)), a.out);
}

bool silu_mul_covers(const BinaryArgs& a) { return computes(a.out.dtype()); }

void silu_mul(const BinaryArgs& a) {
  const int64_t n = a.out.numel();
  if (n == 0) return;
  const Tensor s = silu_f32(to_f32(a.a)), up = to_f32(a.b);
  Tensor y = empty_f32(a.out.shape());
  binary(Binary::mul, s.data_as<float>(), up.data_as<float>(), Broadcast::none, y.data_as<float>(), 1, n);
  from_f32(y, a.out);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(silu) {
  t.silu = entry(&silu, &silu_covers);
  t.silu_mul = entry(&silu_mul, &silu_mul_covers);
}

}  // namespace fourfold::generic
