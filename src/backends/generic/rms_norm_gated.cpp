// Generic rms_norm_gated as transformers' Qwen3_5RMSNormGated runs in eager PyTorch: the rms_norm passes, the
// normed rows rounded to x's dtype (a round trip through a temporary of that dtype), times the weight (rounded to
// the product's dtype), then silu of the gate and the product, each a pass.
#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

// x (contiguous f32) rounded to `dtype` and widened back: the value a tensor of that dtype holds.
Tensor rounded(const Tensor& x, DType dtype) {
  if (dtype == DType::f32) return x;
  Tensor narrow = Tensor::empty(x.shape(), dtype);
  from_f32(x, narrow);
  return to_f32(narrow);
}

bool rms_norm_gated_covers(const RmsNormGatedArgs& a) { return computes(a.x.dtype()); }

void rms_norm_gated(const RmsNormGatedArgs& a) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  if (rows == 0 || d == 0) return;
  const DType xt = a.x.dtype();
  Tensor y = rounded(rms_rows_f32(to_f32(a.x), nullptr, a.eps), xt);
  if (a.weight != nullptr) {
    const Tensor w = to_f32(*a.weight);
    Tensor p = empty_f32({rows, d});
    binary(Binary::mul, y.data_as<float>(), w.data_as<float>(), Broadcast::per_col, p.data_as<float>(), rows, d);
    y = rounded(p, a.weight->dtype() == DType::f32 ? DType::f32 : xt);
  }
  const Tensor s = silu_f32(to_f32(a.gate));
  Tensor out = empty_f32({rows, d});
  binary(Binary::mul, y.data_as<float>(), s.data_as<float>(), Broadcast::none, out.data_as<float>(), rows, d);
  from_f32(out, a.out);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(rms_norm_gated) { t.rms_norm_gated = entry(&rms_norm_gated, &rms_norm_gated_covers); }

}  // namespace fourfold::generic
