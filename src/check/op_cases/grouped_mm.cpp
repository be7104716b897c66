// grouped_mm 2-D x 3-D from the moe suite (check/suites.h, MoeCase): a [tokens * top_k, k] @ b [experts, k, n]
// (the transposed view of [experts, n, k] weights), rows per expert by the case's routing.
#include <cmath>

#include "check/op_cases/moe_case.h"
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(grouped_mm) {
  return {
      .op = "grouped_mm",
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const MoeCase& m = case_params<MoeCase>(c);
        const std::vector<int64_t> sizes = moe_group_sizes(m.tokens, m.experts, m.top_k, m.routing);
        Tensor a = in({moe_total_rows(sizes), m.k}, 0);
        // Stored [E, N, K] like nn.Linear weights; grouped_mm takes [E, K, N]: the transposed view.
        Tensor w = in({m.experts, m.n, m.k}, 1, 1.0 / std::sqrt(static_cast<double>(m.k)));
        Tensor b = w.transpose(1, 2);
        Tensor offs = moe_offsets(sizes);
        return [a, b, offs] { return grouped_mm(a, b, offs); };
      },
      .cost = [](const BenchCase& c) {
        // read (A*K + G_active*K*N) * s + 4*G (offs), write A*N * s, flops 2*A*N*K, A = tokens*top_k rows
        const MoeCase& m = case_params<MoeCase>(c);
        const std::vector<int64_t> sizes = moe_group_sizes(m.tokens, m.experts, m.top_k, m.routing);
        const double active = moe_active_experts(sizes), s = element_size(c);
        const double rows = static_cast<double>(m.tokens * m.top_k), n = m.n, k = m.k;
        return OpCost{(rows * k + active * k * n) * s + 4.0 * static_cast<double>(m.experts), rows * n * s,
                      2.0 * rows * n * k};
      },
      .sweep = {{"a[24,32] b[4,32,16] offs[0,5,5,24]", [](SweepInputs& in) {
                   Tensor offs = Tensor::from_vector({0, 5, 5, 24}, {4}, DType::i32);
                   return grouped_mm(in.randn({24, 32}), in.randn({4, 32, 16}, 0.2), offs, in.compute());
                 }}},
  };
}

}  // namespace fourfold
