// add_rms_norm: the residual add fused into rms_norm (x + r, then its RMSNorm over cols); it times the rms_norm
// op, whose correctness cases are rms_norm's.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(add_rms_norm) {
  return {
      .op = "rms_norm",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.cols}, 0), r = in({o.rows, o.cols}, 1), w = in({o.cols}, 2);
        const int64_t d = o.cols;
        return [x, r, w, d] { return add_rms_norm(x, r, {d}, w, kRowRmsEps).first; };
      },
      .cost = [](const BenchCase& c) {   // x, the residual and the weight in; out and the sum out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double e = row_elements(o), s = element_size(c);
        return OpCost{(2 * e + o.cols) * s, 2 * e * s, 0.0};
      },
  };
}

}  // namespace fourfold
