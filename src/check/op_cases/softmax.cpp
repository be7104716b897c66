// softmax over the last of [rows, cols] from the softmax suite (check/suites.h, SoftmaxCase).
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(softmax) {
  return {
      .op = "softmax",
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const SoftmaxCase& sm = case_params<SoftmaxCase>(c);
        Tensor x = in({sm.rows, sm.cols}, 0, 8.0);
        const int dim = sm.dim;
        return [x, dim] { return softmax(x, dim); };
      },
      .cost = [](const BenchCase& c) {   // x in, out
        const SoftmaxCase& sm = case_params<SoftmaxCase>(c);
        const double e = static_cast<double>(sm.rows) * static_cast<double>(sm.cols), s = element_size(c);
        return OpCost{e * s, e * s, 0.0};
      },
      .sweep = {{"x[4,1000] dim -1", [](SweepInputs& in) { return softmax(in.randn({4, 1000}, 3.0), -1); }},
                {"x[3,7] dim -1 (shorter than a vector)", [](SweepInputs& in) { return softmax(in.randn({3, 7}, 3.0), -1); }},
                {"x[5,33] dim 0", [](SweepInputs& in) { return softmax(in.randn({5, 33}, 3.0), 0); }},
                {"x = [33,5] transposed, dim -1 (a strided input)",
                 [](SweepInputs& in) { return softmax(in.randn({33, 5}, 3.0).transpose(0, 1), -1); }}},
  };
}

}  // namespace fourfold
