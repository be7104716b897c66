// Generic upsample_nearest for integer factors, as a graph lowering writes it: the output viewed as
// [N, C, i1, f1, i2, f2, ...], the input expanded (stride 0) along every f dim, one strided copy.
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

bool upsample_nearest_covers(const UpsampleArgs& a) {
  if (!a.out.is_contiguous()) return false;
  for (int d = 2; d < a.x.dim(); ++d)
    if (a.x.size(d) == 0 || a.out.size(d) % a.x.size(d) != 0) return false;
  return true;
}

void upsample_nearest(const UpsampleArgs& a) {
  if (a.out.numel() == 0) return;
  Shape split = {a.x.size(0), a.x.size(1)};
  Tensor src = a.x;
  for (int d = 2; d < a.x.dim(); ++d) {
    split.push_back(a.x.size(d));
    split.push_back(a.out.size(d) / a.x.size(d));
    src = src.unsqueeze(static_cast<int>(split.size()) - 1);
  }
  Tensor dst = a.out.view(split);
  copy(src.expand(split), dst);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(upsample_nearest) {
  t.upsample_nearest = entry(&upsample_nearest, &upsample_nearest_covers);
}

}  // namespace fourfold::generic
