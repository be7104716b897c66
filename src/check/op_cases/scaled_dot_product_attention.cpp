// scaled_dot_product_attention from the attention suite (check/suites.h, AttentionCase): q [batch, q_heads,
// q_len, head_dim], k and v [batch, kv_heads, kv_len, head_dim], GQA when the head counts differ.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(scaled_dot_product_attention) {
  return {
      .op = "scaled_dot_product_attention",
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const AttentionCase& a = case_params<AttentionCase>(c);
        Tensor q = in({a.batch, a.q_heads, a.q_len, a.head_dim}, 0);
        Tensor k = in({a.batch, a.kv_heads, a.kv_len, a.head_dim}, 1);
        Tensor v = in({a.batch, a.kv_heads, a.kv_len, a.head_dim}, 2);
        AttentionOptions options;
        options.causal = a.causal;
        options.enable_gqa = a.q_heads != a.kv_heads;
        return [q, k, v, options] { return scaled_dot_product_attention(q, k, v, options); };
      },
      .cost = [](const BenchCase& c) {
        // read (q + k + v) * s (k, v once: GQA shares them), write out * s, flops 2 * B * Hq * P * (E + Ev),
        // P = attended (query, key) pairs (L*S without a mask; causal counts only the pairs the mask keeps)
        const AttentionCase& a = case_params<AttentionCase>(c);
        const double b = a.batch, hq = a.q_heads, hk = a.kv_heads, e = a.head_dim, s = element_size(c);
        const double q = b * hq * a.q_len * e, kv = 2.0 * b * hk * a.kv_len * e;
        return OpCost{(q + kv) * s, q * s, 2.0 * b * hq * a.attended_pairs() * (e + e)};
      },
      .sweep = {{"q[1,8,5,64] kv[1,2,37,64] gqa lower-right causal", [](SweepInputs& in) {
                   AttentionOptions o;
                   o.causal = CausalMode::lower_right;
                   o.enable_gqa = true;
                   return scaled_dot_product_attention(in.randn({1, 8, 5, 64}), in.randn({1, 2, 37, 64}),
                                                       in.randn({1, 2, 37, 64}), o);
                 }},
                {"q[1,2,1,80] kv[1,2,19,80] (one decode row, an odd head size)", [](SweepInputs& in) {
                   return scaled_dot_product_attention(in.randn({1, 2, 1, 80}), in.randn({1, 2, 19, 80}),
                                                       in.randn({1, 2, 19, 80}), AttentionOptions{});
                 }}},
  };
}

}  // namespace fourfold
