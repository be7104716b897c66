// group_norm: x [N, C, *] normalized over each of `groups` channel groups, with a weight and a bias [C].
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(group_norm) {
  return {
      .op = "group_norm",
      .row_op = {.fields = {"x", "groups"},
                 .shape = [](const RowOpCase& o) { return fmt::format("x[{}] groups {}", dims(o.x), o.groups); },
                 .check = [](const RowOpCase& o) -> std::optional<RowOpProblem> {
                   if (o.x.size() < 2) return RowOpProblem{"x", "[N, C, *] (at least 2 dims)"};
                   if (o.x[1] % o.groups != 0) return RowOpProblem{"groups", fmt::format("a divisor of C={}", o.x[1])};
                   return std::nullopt;
                 }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in(o.x, 0), w = in({o.x[1]}, 1), b = in({o.x[1]}, 2);
        const int64_t groups = o.groups;
        return [x, w, b, groups] { return group_norm(x, groups, w, b); };
      },
      .cost = [](const BenchCase& c) {   // x, weight and bias in, out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double s = element_size(c);
        return OpCost{(numel(o.x) + 2.0 * o.x[1]) * s, numel(o.x) * s, 0.0};
      },
      .sweep = {{"x[2,8,5,5] groups 4", [](SweepInputs& in) {
                   return group_norm(in.randn({2, 8, 5, 5}), 4, in.positive({8}), in.randn({8}));
                 }}},
  };
}

}  // namespace fourfold
