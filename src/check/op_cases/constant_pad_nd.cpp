// constant_pad_nd from the pad suite (check/suites.h, PadCase): x in the case's memory layout, padded (or
// cropped) by the case's pads.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {
namespace {

Shape padded_shape(const PadCase& p) {
  Shape out = p.shape;
  for (size_t k = 0; k < p.pads.size(); ++k) out[out.size() - 1 - k / 2] += p.pads[k];
  return out;
}

// The pad input in the case's layout; the logical shape is always p.shape.
Tensor pad_input(const PadCase& p, DType dtype, uint64_t seed) {
  const int rank = static_cast<int>(p.shape.size());
  if (p.layout == PadLayout::channels_last) {
    if (rank == 2) return bench_tensor({p.shape[1], p.shape[0]}, dtype, seed).transpose(0, 1);
    Shape stored = {p.shape[0]};
    for (int d = 2; d < rank; ++d) stored.push_back(p.shape[d]);
    stored.push_back(p.shape[1]);
    std::vector<int> perm = {0, rank - 1};
    for (int d = 1; d < rank - 1; ++d) perm.push_back(d);
    return bench_tensor(stored, dtype, seed).permute(perm);
  }
  if (p.layout == PadLayout::sliced) {
    Shape wide = p.shape;
    wide.back() += 2;
    return bench_tensor(wide, dtype, seed).narrow(rank - 1, 1, p.shape.back());
  }
  return bench_tensor(p.shape, dtype, seed);
}

}  // namespace

FOURFOLD_OP_CASES(constant_pad_nd) {
  return {
      .op = "constant_pad_nd",
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const PadCase& p = case_params<PadCase>(c);
        Tensor x = in.wide(pad_input(p, in.dtype(), in.seed()));
        const std::vector<int64_t> pads = p.pads;
        const double value = p.value;
        return [x, pads, value] { return constant_pad_nd(x, pads, value); };
      },
      .cost = [](const BenchCase& c) {   // read numel(x) * s, write numel(out) * s
        const PadCase& p = case_params<PadCase>(c);
        const double s = element_size(c);
        return OpCost{numel(p.shape) * s, numel(padded_shape(p)) * s, 0.0};
      },
      .sweep = {{"x[1,3,4,8,8] pads (1,1,1,1,2,0)", [](SweepInputs& in) {
                   return constant_pad_nd(in.randn({1, 3, 4, 8, 8}), {1, 1, 1, 1, 2, 0}, 0.5);
                 }}},
      .ulp_bound = 0,   // a copy and the pad value, rounded once as the reference rounds it: nothing else is rounded
  };
}

}  // namespace fourfold
