// topk: the k largest of each row of [rows, cols]; the row returns the values.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(topk) {
  return {
      .op = "topk",
      .row_op = {.fields = {"rows", "cols", "k"},
                 .shape = [](const RowOpCase& o) { return fmt::format("x[{},{}] k {}", o.rows, o.cols, o.k); },
                 .check = [](const RowOpCase& o) -> std::optional<RowOpProblem> {
                   if (o.k > o.cols) return RowOpProblem{"k", fmt::format("at most cols={}", o.cols)};
                   return std::nullopt;
                 }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.cols}, 0, 8.0);
        const int64_t k = o.k;
        return [x, k] { return topk(x, k).first; };
      },
      .cost = [](const BenchCase& c) {   // x in; k values and their int64 indices per row out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double e = row_elements(o), s = element_size(c);
        return OpCost{e * s, static_cast<double>(o.rows * o.k) * (s + 8.0), 0.0};
      },
      .sweep = {{"x[4,100] k 5 (values)", [](SweepInputs& in) { return topk(in.randn({4, 100}), 5).first; }},
                {"x[2,1000] k 17 (values)", [](SweepInputs& in) { return topk(in.randn({2, 1000}), 17).first; }}},
      .ulp_bound = 0,   // the values are copied from x: nothing is rounded
  };
}

}  // namespace fourfold
