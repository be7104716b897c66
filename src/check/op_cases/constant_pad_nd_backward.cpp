// constant_pad_nd_backward: grad_out [rows + 2, cols + 2] cropped by one on each side (the gradient of a pad by 1).
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(constant_pad_nd_backward) {
  return {
      .op = "constant_pad_nd_backward",
      .row_op = {.fields = {"rows", "cols"},
                 .shape = [](const RowOpCase& o) {
                   return fmt::format("grad[{},{}] pads (-1,-1,-1,-1)", o.rows + 2, o.cols + 2);
                 }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor g = in({o.rows + 2, o.cols + 2}, 0);
        return [g] { return constant_pad_nd_backward(g, {1, 1, 1, 1}); };
      },
      .cost = [](const BenchCase& c) {   // the interior is read, the rim is not
        const double e = row_elements(case_params<RowOpCase>(c)), s = element_size(c);
        return OpCost{e * s, e * s, 0.0};
      },
      .sweep = {{"grad[1,3,6,10,10] pads (1,1,1,1,2,0)", [](SweepInputs& in) {
                   return constant_pad_nd_backward(in.randn({1, 3, 6, 10, 10}), {1, 1, 1, 1, 2, 0});
                 }}},
      .ulp_bound = 0,   // a crop: nothing is rounded
  };
}

}  // namespace fourfold
