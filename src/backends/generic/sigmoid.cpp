// Generic sigmoid as 1 / (1 + exp(-x)) in passes: negate, exp, add one, reciprocal.
#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

bool sigmoid_covers(const UnaryArgs& a) { return computes(a.x.dtype()); }

void sigmoid(const UnaryArgs& a) {
  const int64_t n = a.x.numel();
  if (n == 0) return;
  const Tensor x = to_f32(a.x);
  Tensor neg = empty_f32(x.shape()), e = empty_f32(x.shape()), denom = empty_f32(x.shape()), y = empty_f32(x.shape());
  unary(Unary::neg, x.data_as<float>(), neg.data_as<float>(), n);
  unary(Unary::exp, neg.data_as<float>(), e.data_as<float>(), n);
  affine(e.data_as<float>(), 1.0f, 1.0f, denom.data_as<float>(), n);
  unary(Unary::reciprocal, denom.data_as<float>(), y.data_as<float>(), n);
  from_f32(y, a.out);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(sigmoid) { t.sigmoid = entry(&sigmoid, &sigmoid_covers); }

}  // namespace fourfold::generic
