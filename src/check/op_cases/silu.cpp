// silu: x * sigmoid(x), elementwise over [rows, cols].
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(silu) {
  return {
      .op = "silu",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.cols}, 0, 4.0);
        return [x] { return silu(x); };
      },
      .cost = [](const BenchCase& c) {   // x in, out
        const double e = row_elements(case_params<RowOpCase>(c)), s = element_size(c);
        return OpCost{e * s, e * s, 0.0};
      },
      .sweep = {{"x[3,257]", [](SweepInputs& in) { return silu(in.randn({3, 257}, 4.0)); }},
                {"x = [9,4] transposed (a strided input)",
                 [](SweepInputs& in) { return silu(in.randn({9, 4}, 4.0).transpose(0, 1)); }}},
  };
}

}  // namespace fourfold
