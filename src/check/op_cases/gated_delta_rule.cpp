// gated_delta_rule: a Gated DeltaNet layer's recurrence over T tokens, in the mode the engine picks (token by
// token for a decode step, chunks of 64 for a prompt). Rows and costs: gated_delta_rule_case.h.
#include "check/op_cases/gated_delta_rule_case.h"

namespace fourfold {

namespace {

Tensor sweep_case(SweepInputs& in, int64_t t, int64_t hk, int64_t hv, int64_t d, GatedDeltaMode mode, bool fused) {
  const DType state_dtype = in.compute() == DType::f64 ? DType::f64 : DType::f32;
  GatedDeltaRuleOptions o;
  o.mode = mode;
  o.chunk_size = 4;
  Tensor g = in.randn({1, t, hv}), beta = in.randn({1, t, hv});
  if (fused) {
    o.a_log = in.randn({hv});
    o.dt_bias = in.randn({hv});
  } else {
    g = in.randn({1, t, hv}, 0.3).to(state_dtype);
    beta = in.positive({1, t, hv});
  }
  const Tensor q = in.randn({1, t, hk, d}), k = in.randn({1, t, hk, d}), v = in.randn({1, t, hv, d});
  return gated_delta_rule(q, k, v, g, beta, in.randn({1, hv, d, d}, 0.1).to(state_dtype), o);
}

}  // namespace

FOURFOLD_OP_CASES(gated_delta_rule) {
  OpCases e = delta_rule_case::rows<GatedDeltaMode::auto_>();
  e.sweep = {{"q[1,9,2,16] v[1,9,4,16] state, fused gates, chunks of 4",
              [](SweepInputs& in) { return sweep_case(in, 9, 2, 4, 16, GatedDeltaMode::chunked, true); }},
             {"q[1,3,1,16] v[1,3,2,16] state, g and beta given, token by token",
              [](SweepInputs& in) { return sweep_case(in, 3, 1, 2, 16, GatedDeltaMode::recurrent, false); }}};
  return e;
}

}  // namespace fourfold
