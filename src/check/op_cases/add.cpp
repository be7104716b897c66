// add: a + b over [rows, cols]; the sweep case broadcasts and scales b (alpha).
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(add) {
  return {
      .op = "add",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor a = in({o.rows, o.cols}, 0), b = in({o.rows, o.cols}, 1);
        return [a, b] { return add(a, b); };
      },
      .cost = [](const BenchCase& c) {   // a and b in, out
        const double e = row_elements(case_params<RowOpCase>(c)), s = element_size(c);
        return OpCost{2 * e * s, e * s, 0.0};
      },
      .sweep = {{"a[3,1,5] + 0.5 * b[4,5]", [](SweepInputs& in) {
                   return add(in.randn({3, 1, 5}), in.randn({4, 5}), 0.5);
                 }},
                {"a[2,67] + b = [67,2] transposed", [](SweepInputs& in) {
                   return add(in.randn({2, 67}), in.randn({67, 2}).transpose(0, 1));
                 }}},
  };
}

}  // namespace fourfold
