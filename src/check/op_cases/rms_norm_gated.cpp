// rms_norm_gated: Gated DeltaNet's output norm, x and gate [rows, cols] (rows = tokens x value heads, cols = the
// head dim), weight [cols].
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(rms_norm_gated) {
  return {
      .op = "rms_norm_gated",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.cols}, 0), gate = in({o.rows, o.cols}, 1, 3.0), w = in({o.cols}, 2);
        return [x, gate, w] { return rms_norm_gated(x, gate, w, kRowRmsEps); };
      },
      .cost = [](const BenchCase& c) {   // x, gate and the weight in, out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double e = row_elements(o), s = element_size(c);
        return OpCost{(2 * e + o.cols) * s, e * s, 0.0};
      },
      // Its definition rounds inside (transformers' roundings of the normed x and of its product with the weight),
      // which the float64 run does not: one ULP each, two at most.
      .sweep = {{"x[5,128] gate[5,128] w[128]", [](SweepInputs& in) {
                   return rms_norm_gated(in.randn({5, 128}), in.randn({5, 128}, 3.0), in.positive({128}), 1e-6);
                 }, 2}},
  };
}

}  // namespace fourfold
