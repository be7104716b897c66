// moe_experts: the whole routed-expert computation of the moe suite's "experts" rows (moe_params.h, MoeCase
// with n = I, k = H): gate, up and down of each expert over its rows, weighted and summed per token.
#include <algorithm>
#include <cmath>

#include "check/op_cases/moe_case.h"
#include "check/op_cases/op_case.h"
#include "fourfold/moe.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(moe_experts) {
  return {
      .op = "moe_experts",
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        // Rows sorted by expert, tokens taken round-robin (each expert's rows are distinct tokens while it has
        // at most `tokens` rows), routing weights 1 / top_k.
        const MoeCase& m = case_params<MoeCase>(c);
        const std::vector<int64_t> sizes = moe_group_sizes(m.tokens, m.experts, m.top_k, m.routing);
        const int64_t total = moe_total_rows(sizes);
        std::vector<double> token;
        for (int64_t r = 0; r < total; ++r) token.push_back(static_cast<double>(r % std::max<int64_t>(m.tokens, 1)));
        const double in_scale = 1.0 / std::sqrt(static_cast<double>(m.k));
        const double mid_scale = 1.0 / std::sqrt(static_cast<double>(m.n));
        Tensor x = in({m.tokens, m.k}, 0);
        MoeExpertWeights w;
        w.gate = in({m.experts, m.n, m.k}, 1, in_scale);
        w.up = in({m.experts, m.n, m.k}, 2, in_scale);
        w.down = in({m.experts, m.k, m.n}, 3, mid_scale);
        Tensor rows = Tensor::from_vector(token, {total}, DType::i32);
        Tensor weights = Tensor::full({total}, 1.0 / static_cast<double>(m.top_k), DType::f32);
        Tensor offs = moe_offsets(sizes);
        return [x, w, rows, weights, offs] { return moe_experts(x, w, rows, weights, offs); };
      },
      .cost = [](const BenchCase& c) {
        // x once, gate + up + down of each active expert once, out once: read (T*H + 3*G_active*I*H) * s +
        // 4*(2*A + G) (rows, weights, offs), write T*H * s, flops 6*A*I*H, A = tokens*top_k. The
        // h = silu(gate) * up temporary is not counted: it stays in the caches.
        const MoeCase& m = case_params<MoeCase>(c);
        const std::vector<int64_t> sizes = moe_group_sizes(m.tokens, m.experts, m.top_k, m.routing);
        const double active = moe_active_experts(sizes), s = element_size(c);
        const double rows = static_cast<double>(m.tokens * m.top_k), n = m.n, k = m.k;
        return OpCost{(static_cast<double>(m.tokens) * k + 3.0 * active * k * n) * s +
                          4.0 * (2.0 * rows + static_cast<double>(m.experts)),
                      static_cast<double>(m.tokens) * k * s, 6.0 * rows * n * k};
      },
      .sweep = {{"x[3,16] gate/up[4,8,16] down[4,16,8] rows per expert 2,0,3,1", [](SweepInputs& in) {
                   // x is f32 or bf16: an f16 run keeps its f16 values in an f32 x over f16 weights (weight-only
                   // storage).
                   Tensor x = in.randn({3, 16});
                   if (x.dtype() == DType::f16) x = x.to(DType::f32);
                   MoeExpertWeights w;
                   w.gate = in.randn({4, 8, 16}, 0.25);
                   w.up = in.randn({4, 8, 16}, 0.25);
                   w.down = in.randn({4, 16, 8}, 0.35);
                   Tensor rows = Tensor::from_vector({0, 1, 0, 1, 2, 2}, {6}, DType::i32);
                   Tensor weights = Tensor::from_vector({0.5, 0.25, 0.5, 0.75, 0.25, 0.5}, {6}, DType::f32);
                   Tensor offs = Tensor::from_vector({2, 2, 5, 6}, {4}, DType::i32);
                   return moe_experts(x, w, rows, weights, offs);
                 }}},
  };
}

}  // namespace fourfold
