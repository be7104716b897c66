// channel_rms_norm: x [N, C, *] normalized over C, times gamma [C], then the SiLU the VAE fuses.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(channel_rms_norm) {
  return {
      .op = "channel_rms_norm",
      .row_op = {.fields = {"x"},
                 .shape = [](const RowOpCase& o) { return fmt::format("x[{}] gamma[{}] +silu", dims(o.x), o.x[1]); },
                 .check = [](const RowOpCase& o) -> std::optional<RowOpProblem> {
                   if (o.x.size() < 2) return RowOpProblem{"x", "[N, C, *] (at least 2 dims)"};
                   return std::nullopt;
                 }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor x = in(o.x, 0), w = in({o.x[1]}, 1);
        return [x, w] { return channel_rms_norm(x, w, kRowRmsEps, true); };
      },
      .cost = [](const BenchCase& c) {   // x and gamma in, out
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double s = element_size(c);
        return OpCost{(numel(o.x) + o.x[1]) * s, numel(o.x) * s, 0.0};
      },
      // Without the fused SiLU: with it, the op rounds the normalized value to x's dtype before the SiLU (as
      // diffusers does), which the float64 run cannot, so the sweep's 0-ULP rule does not apply to that path
      // (tests/ops/channel_rms_norm_test.cpp checks it against the rounded value).
      .sweep = {{"x[2,6,3,5] gamma[6]", [](SweepInputs& in) {
                   return channel_rms_norm(in.randn({2, 6, 3, 5}), in.randn({6}), 1e-6, false);
                 }}},
  };
}

}  // namespace fourfold
