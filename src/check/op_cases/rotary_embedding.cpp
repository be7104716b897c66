// rotary_embedding: x [rows tokens, heads, cols], rotated by cos and sin [rows, 1, cols / 2] (half-split).
#include <cmath>

#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(rotary_embedding) {
  return {
      .op = "rotary_embedding",
      .row_op = {.fields = {"rows", "cols"},
                 .shape = [](const RowOpCase& o) {
                   return fmt::format("x[{},{},{}] cos,sin[{},1,{}]", o.rows, o.heads, o.cols, o.rows, o.cols / 2);
                 }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.heads, o.cols}, 0), cos = in({o.rows, 1, o.cols / 2}, 1);
        Tensor sin = in({o.rows, 1, o.cols / 2}, 2);
        return [x, cos, sin] { return rotary_embedding(x, cos, sin); };
      },
      .cost = [](const BenchCase& c) {   // x, cos and sin in, out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double e = row_elements(o), s = element_size(c);
        return OpCost{(e * o.heads + e) * s, e * o.heads * s, 0.0};
      },
      .sweep = {{"x[1,4,6,64] cos/sin[6,32] half-split", [](SweepInputs& in) {
                   std::vector<double> cv, sv;
                   for (double a : in.randn({6, 32}).to_vector()) {
                     cv.push_back(std::cos(a));
                     sv.push_back(std::sin(a));
                   }
                   return rotary_embedding(in.randn({1, 4, 6, 64}), in.from_values(cv, {6, 32}),
                                           in.from_values(sv, {6, 32}));
                 }}},
  };
}

}  // namespace fourfold
