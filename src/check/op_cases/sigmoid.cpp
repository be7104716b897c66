// sigmoid: 1 / (1 + exp(-x)), elementwise over [rows, cols].
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(sigmoid) {
  return {
      .op = "sigmoid",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.cols}, 0, 4.0);
        return [x] { return sigmoid(x); };
      },
      .cost = [](const BenchCase& c) {   // x in, out
        const double e = row_elements(case_params<RowOpCase>(c)), s = element_size(c);
        return OpCost{e * s, e * s, 0.0};
      },
      .sweep = {{"x[3,257]", [](SweepInputs& in) { return sigmoid(in.randn({3, 257}, 4.0)); }},
                {"x[5] (shorter than a vector)", [](SweepInputs& in) { return sigmoid(in.randn({5}, 6.0)); }},
                {"x[2,70000] (past a thread's block)", [](SweepInputs& in) {
                   return sigmoid(in.randn({2, 70000}, 6.0));
                 }}},
  };
}

}  // namespace fourfold
