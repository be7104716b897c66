// causal_conv1d: a linear-attention layer's short convolution over T tokens of C channels with K taps, SiLU
// fused, from a conv state [1, C, K-1]; x channel-last as the engine keeps it ([T, C] rows).
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(causal_conv1d) {
  return {
      .op = "causal_conv1d",
      .row_op = {.fields = {"rows", "cols", "k"},
                 .shape = [](const RowOpCase& o) {
                   return fmt::format("x[{},{}] w[{},{}] state", o.rows, o.cols, o.cols, o.k);
                 }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        const Tensor x = in({1, o.rows, o.cols}, 0).transpose(1, 2), w = in({o.cols, o.k}, 1, 0.5);
        const Tensor state = in({1, o.k - 1, o.cols}, 2).transpose(1, 2);
        // The state is updated in place: each call starts from a copy, so that every call (the timed ones and the
        // one compared with the oracle) computes the same result; the copy keeps the engine's channel-last layout.
        return [x, w, state] {
          return causal_conv1d(x, w, std::nullopt, state.transpose(1, 2).clone().transpose(1, 2), /*silu=*/true);
        };
      },
      .cost = [](const BenchCase& c) {   // x, weight and the state in; out and the state out (the copy: twice more)
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double s = element_size(c), x = static_cast<double>(o.rows * o.cols);
        const double state = static_cast<double>(o.cols * (o.k - 1)), w = static_cast<double>(o.cols * o.k);
        return OpCost{(x + w + 2 * state) * s, (x + 2 * state) * s, 2.0 * x * static_cast<double>(o.k)};
      },
      .sweep = {{"x[2,37,9] w[37,4] state[2,37,3] silu",
                 [](SweepInputs& in) {
                   return causal_conv1d(in.randn({2, 37, 9}), in.randn({37, 4}), in.randn({37}), in.randn({2, 37, 3}), true);
                 }},
                {"x[1,16,2] w[16,4] state[1,16,3], no act (fewer tokens than taps)", [](SweepInputs& in) {
                   return causal_conv1d(in.randn({1, 16, 2}), in.randn({16, 4}), std::nullopt, in.randn({1, 16, 3}));
                 }},
                {"x = [1,5,37] transposed (channel-last, as the decoder's rows), w[37,4], state, silu",
                 [](SweepInputs& in) {
                   return causal_conv1d(in.randn({1, 5, 37}).transpose(1, 2), in.randn({37, 4}), in.randn({37}),
                                        in.randn({1, 37, 3}), true);
                 }}},
  };
}

}  // namespace fourfold
