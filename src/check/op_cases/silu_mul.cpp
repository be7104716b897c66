// silu_mul: silu(gate) * up over [rows, cols] (the gated MLP's activation).
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(silu_mul) {
  return {
      .op = "silu_mul",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor gate = in({o.rows, o.cols}, 0, 4.0), up = in({o.rows, o.cols}, 1);
        return [gate, up] { return silu_mul(gate, up); };
      },
      .cost = [](const BenchCase& c) {   // gate and up in, out
        const double e = row_elements(case_params<RowOpCase>(c)), s = element_size(c);
        return OpCost{2 * e * s, e * s, 0.0};
      },
      .sweep = {{"gate/up[3,257]", [](SweepInputs& in) {
                   return silu_mul(in.randn({3, 257}, 4.0), in.randn({3, 257}));
                 }},
                {"gate/up[1,5] (shorter than a vector)", [](SweepInputs& in) {
                   return silu_mul(in.randn({1, 5}, 4.0), in.randn({1, 5}));
                 }},
                {"gate/up[17] (a vector and a tail)", [](SweepInputs& in) {
                   return silu_mul(in.randn({17}, 4.0), in.randn({17}));
                 }},
                {"gate/up[40000] (past a thread's block)", [](SweepInputs& in) {
                   return silu_mul(in.randn({40000}, 4.0), in.randn({40000}));
                 }}},
  };
}

}  // namespace fourfold
