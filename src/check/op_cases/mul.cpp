// mul: a * b over [rows, cols]; the sweep case broadcasts b.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(mul) {
  return {
      .op = "mul",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor a = in({o.rows, o.cols}, 0), b = in({o.rows, o.cols}, 1);
        return [a, b] { return mul(a, b); };
      },
      .cost = [](const BenchCase& c) {   // a and b in, out
        const double e = row_elements(case_params<RowOpCase>(c)), s = element_size(c);
        return OpCost{2 * e * s, e * s, 0.0};
      },
      .sweep = {{"a[3,1,5] * b[4,5]", [](SweepInputs& in) { return mul(in.randn({3, 1, 5}), in.randn({4, 5})); }},
                {"a[67] * b[3,67]", [](SweepInputs& in) { return mul(in.randn({67}), in.randn({3, 67})); }}},
  };
}

}  // namespace fourfold
