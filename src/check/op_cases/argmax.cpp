// argmax over the last of [rows, cols].
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(argmax) {
  return {
      .op = "argmax",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.cols}, 0, 8.0);
        return [x] { return argmax(x, -1); };
      },
      .cost = [](const BenchCase& c) {   // x in, one int64 index per row out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double e = row_elements(o), s = element_size(c);
        return OpCost{e * s, 8.0 * o.rows, 0.0};
      },
      .sweep = {{"x[4,100] dim 1", [](SweepInputs& in) { return argmax(in.randn({4, 100}), 1); }}},
      .ulp_bound = 0,   // an index is the right element or another one: 1 ULP of it is the neighbour
  };
}

}  // namespace fourfold
