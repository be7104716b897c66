// gelu (tanh approximation), elementwise over [rows, cols].
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(gelu) {
  return {
      .op = "gelu",
      .row_op = {.fields = {"rows", "cols"},
                 .shape = [](const RowOpCase& o) { return fmt::format("x[{},{}] tanh", o.rows, o.cols); }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.cols}, 0, 4.0);
        return [x] { return gelu(x, GeluApproximate::tanh); };
      },
      .cost = [](const BenchCase& c) {   // x in, out
        const double e = row_elements(case_params<RowOpCase>(c)), s = element_size(c);
        return OpCost{e * s, e * s, 0.0};
      },
      .sweep = {{"x[3,257] tanh", [](SweepInputs& in) {
                   return gelu(in.randn({3, 257}, 4.0), GeluApproximate::tanh);
                 }}},
  };
}

}  // namespace fourfold
