// rms_norm_backward: the gradients of rms_norm over cols of x [rows, cols]; the row returns grad_x.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(rms_norm_backward) {
  return {
      .op = "rms_norm_backward",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor g = in({o.rows, o.cols}, 0), x = in({o.rows, o.cols}, 1), w = in({o.cols}, 2);
        const int64_t d = o.cols;
        return [g, x, w, d] { return rms_norm_backward(g, x, {d}, w, kRowRmsEps).grad_x; };
      },
      .cost = [](const BenchCase& c) {   // grad_out, x and the weight in; grad_x and grad_weight out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double e = row_elements(o), s = element_size(c);
        return OpCost{(2 * e + o.cols) * s, (e + o.cols) * s, 0.0};
      },
      .sweep = {{"x[6,64] w[64]", [](SweepInputs& in) {
                   return rms_norm_backward(in.randn({6, 64}), in.randn({6, 64}), {64}, in.positive({64}), 1e-6).grad_x;
                 }}},
  };
}

}  // namespace fourfold
