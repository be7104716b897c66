// log_softmax over the last of [rows, cols].
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(log_softmax) {
  return {
      .op = "log_softmax",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.cols}, 0, 8.0);
        return [x] { return log_softmax(x, -1); };
      },
      .cost = [](const BenchCase& c) {   // x in, out
        const double e = row_elements(case_params<RowOpCase>(c)), s = element_size(c);
        return OpCost{e * s, e * s, 0.0};
      },
      .sweep = {{"x[4,1000] dim -1", [](SweepInputs& in) { return log_softmax(in.randn({4, 1000}, 3.0), -1); }},
                {"x[3,7] dim -1 (shorter than a vector)",
                 [](SweepInputs& in) { return log_softmax(in.randn({3, 7}, 3.0), -1); }}},
  };
}

}  // namespace fourfold
