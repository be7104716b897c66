// rms_norm: x [rows, cols] normalized over cols, times a weight [cols] (a decoder's RMSNorm).
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(rms_norm) {
  return {
      .op = "rms_norm",
      .row_op = {.fields = {"rows", "cols"}},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in({o.rows, o.cols}, 0), w = in({o.cols}, 1);
        const int64_t d = o.cols;
        return [x, w, d] { return rms_norm(x, {d}, w, kRowRmsEps); };
      },
      .cost = [](const BenchCase& c) {   // x and the weight in, out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double e = row_elements(o), s = element_size(c);
        return OpCost{(e + o.cols) * s, e * s, 0.0};
      },
      .sweep = {{"x[6,128] w[128]", [](SweepInputs& in) {
                   return rms_norm(in.randn({6, 128}), {128}, in.positive({128}), 1e-6);
                 }},
                {"x[3,67] w[67] (an odd row)", [](SweepInputs& in) {
                   return rms_norm(in.randn({3, 67}), {67}, in.positive({67}), 1e-6);
                 }},
                {"x = [4,96] narrowed to 80 columns (strided rows), no weight", [](SweepInputs& in) {
                   return rms_norm(in.randn({4, 96}).narrow(1, 8, 80), {80}, std::nullopt, 1e-6);
                 }}},
  };
}

}  // namespace fourfold
