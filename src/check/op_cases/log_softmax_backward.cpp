// log_softmax_backward: the gradient of log_softmax over the last of [rows, cols], from grad_out and the output.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(log_softmax_backward) {
  return {
      .op = "log_softmax_backward",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor g = in({o.rows, o.cols}, 0), y = in({o.rows, o.cols}, 1, 4.0);
        return [g, y] { return log_softmax_backward(g, y, -1); };
      },
      .cost = [](const BenchCase& c) {   // grad_out and the output in, grad_x out
        const double e = row_elements(case_params<RowOpCase>(c)), s = element_size(c);
        return OpCost{2 * e * s, e * s, 0.0};
      },
      .sweep = {{"x[4,300]", [](SweepInputs& in) {
                   return log_softmax_backward(in.randn({4, 300}), in.randn({4, 300}, 0.1), 1);
                 }}},
  };
}

}  // namespace fourfold
