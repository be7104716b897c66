// conv3d from the conv suite's 5-D cases: x [N, C, T, H, W], weight [O, C / groups, kT, kH, kW], bias [O]; the
// sweep's case is the VAE's causal form (causal_conv3d pads time on the left only).
#include "check/op_cases/conv_case.h"

namespace fourfold {

FOURFOLD_OP_CASES(conv3d) {
  return {
      .op = "conv3d",
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const ConvCase& v = case_params<ConvCase>(c);
        const ConvInputs t = conv_inputs(v, in);
        return [t, v] { return conv3d(t.x, t.weight, t.bias, v.stride, v.padding, v.dilation, v.groups); };
      },
      .cost = conv_cost,
      .sweep = {{"causal x[1,3,4,6,6] w[4,3,3,3,3]", [](SweepInputs& in) {
                   return causal_conv3d(in.randn({1, 3, 4, 6, 6}), in.randn({4, 3, 3, 3, 3}, 0.2), in.randn({4}));
                 }}},
  };
}

}  // namespace fourfold
