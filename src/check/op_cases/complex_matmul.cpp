// complex_matmul: a [m, k] @ b [k, n] in complex64; it times the matmul op, whose correctness cases are matmul's.
#include <cmath>

#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(complex_matmul) {
  return {
      .op = "matmul",
      .row_op = {.fields = {"m", "n", "k"},
                 .shape = [](const RowOpCase& o) { return fmt::format("a[{},{}] b[{},{}]", o.m, o.k, o.k, o.n); }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor a = in({o.m, o.k}, 0), b = in({o.k, o.n}, 1, 1.0 / std::sqrt(static_cast<double>(o.k)));
        return [a, b] { return matmul(a, b); };
      },
      .cost = [](const BenchCase& c) {   // a complex multiply-add is 4 real ones: 8 flops
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double m = o.m, n = o.n, k = o.k, s = element_size(c);
        return OpCost{(m * k + k * n) * s, m * n * s, 8.0 * m * n * k};
      },
  };
}

}  // namespace fourfold
