// Generic grouped_mm: the offsets read on the host, then one f32 GEMM per group on converted copies of the
// group's slices (only the groups that have work touch their operands), as a graph lowering of a loop over
// groups does.
#include <vector>

#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {

namespace {

void product_f32(const Tensor& a, const Tensor& weight_nk, Tensor& out) {
  const int64_t m = a.size(0), k = a.size(1), n = weight_nk.size(0);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    fill(out, 0.0);
    return;
  }
  const Tensor x = to_f32(a);
  const Tensor w = to_f32(weight_nk);
  Tensor product = empty_f32({m, n});
  gemm_nt(x.data_as<float>(), w.data_as<float>(), product.data_as<float>(), m, n, k);
  from_f32(product, out);
}

bool grouped_mm_covers(const GroupedMmArgs& a) { return computes(a.a.dtype()); }

void grouped_mm(const GroupedMmArgs& args) {
  const Tensor &a = args.a, &b = args.b;
  const std::vector<double> ends = args.offs != nullptr ? args.offs->to_vector() : std::vector<double>{};
  const int64_t groups = args.kind == GroupedMmCase::a3d_b3d ? a.size(0) : static_cast<int64_t>(ends.size());
  int64_t start = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t end = args.offs != nullptr ? static_cast<int64_t>(ends[static_cast<size_t>(g)]) : 0;
    const int64_t len = end - start;
    // The group's A [m, k], B [k, n] and out [m, n] as views.
    Tensor ga, gb, go;
    switch (args.kind) {
      case GroupedMmCase::a2d_b3d: ga = a.narrow(0, start, len), gb = b.select(0, g), go = args.out.narrow(0, start, len); break;
      case GroupedMmCase::a3d_b2d: ga = a.select(0, g), gb = b.narrow(1, start, len), go = args.out.narrow(1, start, len); break;
      case GroupedMmCase::a2d_b2d: ga = a.narrow(1, start, len), gb = b.narrow(0, start, len), go = args.out.select(0, g); break;
      case GroupedMmCase::a3d_b3d: ga = a.select(0, g), gb = b.select(0, g), go = args.out.select(0, g); break;
    }
    product_f32(ga, gb.transpose(0, 1), go);
    start = end;
  }
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(grouped_mm) {
  t.grouped_mm = entry(&grouped_mm, &grouped_mm_covers);
}

}  // namespace fourfold::generic
