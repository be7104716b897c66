// Generic silu as x / (1 + exp(-x)) in passes: negate, exp, add one, reciprocal, multiply by x.
#include "backends/generic/generic.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {

bool silu_covers(const UnaryArgs& a) { return computes(a.x.dtype()); }

// silu(-inf) = -inf * (1 / inf) = -inf * 0 = NaN, as the reference's -inf / inf.
void silu(const UnaryArgs& a) {
  const int64_t n = a.x.numel();
  if (n == 0) return;
  const Tensor x = to_f32(a.x);
  Tensor neg = empty_f32(a.x.shape()), e = empty_f32(a.x.shape()), denom = empty_f32(a.x.shape());
  Tensor sig = empty_f32(a.x.shape()), y = empty_f32(a.x.shape());
  unary(Unary::neg, x.data_as<float>(), neg.data_as<float>(), n);
  unary(Unary::exp, neg.data_as<float>(), e.data_as<float>(), n);
  affine(e.data_as<float>(), 1.0f, 1.0f, denom.data_as<float>(), n);
  unary(Unary::reciprocal, denom.data_as<float>(), sig.data_as<float>(), n);
  binary(Binary::mul, x.data_as<float>(), sig.data_as<float>(), Broadcast::none, y.data_as<float>(), 1, n);
  from_f32(y, a.out);
}

}  // namespace fourfold::generic
