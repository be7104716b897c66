// upsample_nearest: x [N, C, *spatial] (1 to 3 spatial dims) to `size`, nearest neighbour.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(upsample_nearest) {
  return {
      .op = "upsample_nearest",
      .row_op = {.fields = {"x", "size"},
                 .shape = [](const RowOpCase& o) { return fmt::format("x[{}] -> [{}]", dims(o.x), dims(o.size)); },
                 .check = [](const RowOpCase& o) -> std::optional<RowOpProblem> {
                   if (o.x.size() < 3 || o.x.size() > 5)
                     return RowOpProblem{"x", "[N, C, *spatial] with 1 to 3 spatial dims"};
                   if (o.size.size() + 2 != o.x.size())
                     return RowOpProblem{"size", fmt::format("{} values, one per spatial dim", o.x.size() - 2)};
                   return std::nullopt;
                 }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in(o.x, 0);
        const std::vector<int64_t> size = o.size;
        return [x, size] { return upsample_nearest(x, size); };
      },
      .cost = [](const BenchCase& c) {   // x in, out
        const RowOpCase& o = case_params<RowOpCase>(c);
        Shape out = {o.x[0], o.x[1]};
        out.insert(out.end(), o.size.begin(), o.size.end());
        const double s = element_size(c);
        return OpCost{numel(o.x) * s, numel(out) * s, 0.0};
      },
      .sweep = {{"x[1,2,5,5] -> [11,10]", [](SweepInputs& in) {
                   return upsample_nearest(in.randn({1, 2, 5, 5}), {11, 10});
                 }}},
      .ulp_bound = 0,   // a copy: nothing is rounded
  };
}

}  // namespace fourfold
