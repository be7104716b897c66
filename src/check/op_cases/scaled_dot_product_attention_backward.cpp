// scaled_dot_product_attention_backward: causal self-attention of rows tokens, `heads` query heads and kv_heads
// KV heads of cols; the row computes every gradient and returns grad_q.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(scaled_dot_product_attention_backward) {
  return {
      .op = "scaled_dot_product_attention_backward",
      .row_op = {.fields = {"rows", "cols", "heads", "kv_heads"},
                 .shape = [](const RowOpCase& o) {
                   return fmt::format("q[1,{},{},{}] kv[1,{},{},{}] causal", o.heads, o.rows, o.cols, o.kv_heads,
                                      o.rows, o.cols);
                 },
                 .check = [](const RowOpCase& o) -> std::optional<RowOpProblem> {
                   if (o.heads % o.kv_heads != 0)
                     return RowOpProblem{"kv_heads", fmt::format("a divisor of heads={}", o.heads)};
                   return std::nullopt;
                 }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor q = in({1, o.heads, o.rows, o.cols}, 0), k = in({1, o.kv_heads, o.rows, o.cols}, 1);
        Tensor v = in({1, o.kv_heads, o.rows, o.cols}, 2), g = in({1, o.heads, o.rows, o.cols}, 3);
        AttentionOptions options;
        options.causal = CausalMode::top_left;
        options.enable_gqa = o.heads != o.kv_heads;
        return [g, q, k, v, options] { return scaled_dot_product_attention_backward(g, q, k, v, options).grad_q; };
      },
      .cost = [](const BenchCase& c) {
        // grad_out, q, k, v in; grad_q, grad_k, grad_v out. Five products over the attended pairs: the scores
        // recomputed, grad_v, grad of the probabilities, grad_q and grad_k.
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double s = element_size(c);
        const AttentionCase a{1, o.heads, o.kv_heads, o.cols, o.rows, o.rows, CausalMode::top_left};
        const double q = static_cast<double>(o.heads * o.rows * o.cols);
        const double kv = static_cast<double>(o.kv_heads * o.rows * o.cols);
        return OpCost{(2 * q + 2 * kv) * s, (q + 2 * kv) * s,
                      10.0 * static_cast<double>(o.heads) * a.attended_pairs() * static_cast<double>(o.cols)};
      },
      .sweep = {{"grad_q of q[1,4,3,16] kv[1,2,9,16] gqa", [](SweepInputs& in) {
                   AttentionOptions o;
                   o.enable_gqa = true;
                   Tensor q = in.randn({1, 4, 3, 16}), k = in.randn({1, 2, 9, 16}), v = in.randn({1, 2, 9, 16});
                   return scaled_dot_product_attention_backward(in.randn({1, 4, 3, 16}), q, k, v, o).grad_q;
                 }}},
  };
}

}  // namespace fourfold
