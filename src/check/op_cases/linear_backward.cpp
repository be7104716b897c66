// linear_backward: grad_out [m, n], x [m, k], weight [n, k]; the row times all three gradients and returns
// grad_weight.
#include <cmath>

#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(linear_backward) {
  return {
      .op = "linear_backward",
      .row_op = {.fields = {"m", "n", "k"},
                 .shape = [](const RowOpCase& o) {
                   return fmt::format("g[{},{}] x[{},{}] w[{},{}]", o.m, o.n, o.m, o.k, o.n, o.k);
                 }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor g = in({o.m, o.n}, 0), x = in({o.m, o.k}, 1);
        Tensor w = in({o.n, o.k}, 2, 1.0 / std::sqrt(static_cast<double>(o.k)));
        return [g, x, w] { return linear_backward(g, x, w, true).grad_weight; };
      },
      .cost = [](const BenchCase& c) {   // grad_out, x, weight in; grad_x, grad_weight, grad_bias out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double m = o.m, n = o.n, k = o.k, s = element_size(c);
        return OpCost{(m * n + m * k + n * k) * s, (m * k + n * k + n) * s, 4.0 * m * n * k};
      },
      .sweep = {{"grad_weight of x[5,32] w[24,32]", [](SweepInputs& in) {
                   return linear_backward(in.randn({5, 24}), in.randn({5, 32}), in.randn({24, 32}), true).grad_weight;
                 }}},
  };
}

}  // namespace fourfold
