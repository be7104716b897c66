// Generic channel_rms_norm, as a graph lowering writes the composition it replaces (permute to channels last,
// contiguous, rms_norm, silu, permute back, contiguous): a channels-last f32 copy, rms_norm's passes over its
// rows, silu's passes, and the strided conversion back into out, each into its own temporary.
#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

bool channel_rms_norm_covers(const ChannelNormArgs& a) { return computes(a.x.dtype()); }

void channel_rms_norm(const ChannelNormArgs& a) {
  const int64_t n = a.x.size(0), c = a.x.size(1), positions = a.x.size(2);
  if (a.out.numel() == 0) return;
  const Tensor rows = to_f32(a.x.permute({0, 2, 1})).view({n * positions, c});
  Tensor y = rms_rows_f32(rows, a.weight, a.eps);
  if (a.silu) {
    if (a.out.dtype() != DType::f32) {   // silu sees the normalized value in out's dtype
      Tensor rounded = Tensor::empty(y.shape(), a.out.dtype());
      from_f32(y, rounded);
      y = to_f32(rounded);
    }
    y = silu_f32(y);
  }
  Tensor out = a.out.permute({0, 2, 1});
  from_f32(y.view({n, positions, c}), out);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(channel_rms_norm) {
  t.channel_rms_norm = entry(&channel_rms_norm, &channel_rms_norm_covers);
}

}  // namespace fourfold::generic
