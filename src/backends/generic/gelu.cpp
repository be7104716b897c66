// Generic gelu in passes: x * 0.5 * (1 + erf(x / sqrt 2)), or the tanh form with its cube term.
#include <cmath>
#include <numbers>

#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

bool gelu_covers(const GeluArgs& a) { return computes(a.x.dtype()); }

void gelu(const GeluArgs& a) {
  const int64_t n = a.x.numel();
  if (n == 0) return;
  const Tensor x = to_f32(a.x);
  const float* xp = x.data_as<float>();
  Tensor arg = empty_f32(a.x.shape()), t = empty_f32(a.x.shape()), cdf = empty_f32(a.x.shape());
  Tensor y = empty_f32(a.x.shape());
  if (a.approximate == GeluApproximate::tanh) {
    Tensor cube = empty_f32(a.x.shape()), inner = empty_f32(a.x.shape());
    unary(Unary::cube, xp, cube.data_as<float>(), n);
    affine(cube.data_as<float>(), 0.044715f, 0.0f, cube.data_as<float>(), n);
    binary(Binary::add, xp, cube.data_as<float>(), Broadcast::none, inner.data_as<float>(), 1, n);
    affine(inner.data_as<float>(), static_cast<float>(std::sqrt(2.0 / std::numbers::pi)), 0.0f,
           arg.data_as<float>(), n);
    unary(Unary::tanh, arg.data_as<float>(), t.data_as<float>(), n);
  } else {
    affine(xp, static_cast<float>(1.0 / std::numbers::sqrt2), 0.0f, arg.data_as<float>(), n);
    unary(Unary::erf, arg.data_as<float>(), t.data_as<float>(), n);
  }
  affine(t.data_as<float>(), 0.5f, 0.5f, cdf.data_as<float>(), n);
  // gelu(-inf) = -inf * 0 = NaN, as the reference (and PyTorch).
  binary(Binary::mul, xp, cdf.data_as<float>(), Broadcast::none, y.data_as<float>(), 1, n);
  from_f32(y, a.out);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(gelu) {
  t.gelu = entry(&gelu, &gelu_covers);
}

}  // namespace fourfold::generic
