// softmax_backward: the gradient of softmax over the last of [rows, cols], from grad_out and the output y.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(softmax_backward) {
  return {
      .op = "softmax_backward",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor g = in({o.rows, o.cols}, 0), y = in({o.rows, o.cols}, 1, 1.0 / static_cast<double>(o.cols));
        return [g, y] { return softmax_backward(g, y, -1); };
      },
      .cost = [](const BenchCase& c) {   // grad_out and y in, grad_x out
        const double e = row_elements(case_params<RowOpCase>(c)), s = element_size(c);
        return OpCost{2 * e * s, e * s, 0.0};
      },
      .sweep = {{"x[4,300]", [](SweepInputs& in) {
                   return softmax_backward(in.randn({4, 300}), in.positive({4, 300}), 1);
                 }}},
  };
}

}  // namespace fourfold
