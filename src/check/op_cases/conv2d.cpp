// conv2d from the conv suite's 4-D cases: x [N, C, H, W], weight [O, C / groups, kH, kW], bias [O].
#include "check/op_cases/conv_case.h"

namespace fourfold {

FOURFOLD_OP_CASES(conv2d) {
  return {
      .op = "conv2d",
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const ConvCase& v = case_params<ConvCase>(c);
        const ConvInputs t = conv_inputs(v, in);
        return [t, v] { return conv2d(t.x, t.weight, t.bias, v.stride, v.padding, v.dilation, v.groups); };
      },
      .cost = conv_cost,
      .sweep = {{"x[1,4,9,9] w[6,2,3,3] groups 2 stride 2 pad 1", [](SweepInputs& in) {
                   return conv2d(in.randn({1, 4, 9, 9}), in.randn({6, 2, 3, 3}, 0.3), in.randn({6}), {2, 2}, {1, 1},
                                 {1, 1}, 2);
                 }}},
  };
}

}  // namespace fourfold
