// layer_norm: x [rows, cols] normalized over cols, with a weight and a bias [cols].
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(layer_norm) {
  return {
      .op = "layer_norm",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.cols}, 0), w = in({o.cols}, 1), b = in({o.cols}, 2);
        const int64_t d = o.cols;
        return [x, w, b, d] { return layer_norm(x, {d}, w, b); };
      },
      .cost = [](const BenchCase& c) {   // x, weight and bias in, out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double e = row_elements(o), s = element_size(c);
        return OpCost{(e + 2.0 * o.cols) * s, e * s, 0.0};
      },
      .sweep = {{"x[6,128] w b", [](SweepInputs& in) {
                   return layer_norm(in.randn({6, 128}), {128}, in.positive({128}), in.randn({128}));
                 }}},
  };
}

}  // namespace fourfold
