// embedding: rows token ids looked up in a table [n, cols].
#include <algorithm>

#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {

FOURFOLD_OP_CASES(embedding) {
  return {
      .op = "embedding",
      .row_op = {.fields = {"rows", "cols", "n"},
                 .shape = [](const RowOpCase& o) { return fmt::format("w[{},{}] idx[{}]", o.n, o.cols, o.rows); }},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        // Token ids uniform over the vocabulary, the same in the row and its oracle (only the table widens).
        const RowOpCase& o = case_params<RowOpCase>(c);
        Tensor table = in({o.n, o.cols}, 0);
        Tensor ids = Tensor::empty({o.rows}, DType::f64);
        ids.fill_uniform(in.seed() + 1, 0.0, static_cast<double>(o.n) - 1e-9);
        ids = ids.to(DType::i64);
        return [table, ids] { return embedding(table, ids); };
      },
      .cost = [](const BenchCase& c) {   // the picked rows and the ids in, out; the table is made in full
        const RowOpCase& o = case_params<RowOpCase>(c);
        const double e = row_elements(o), s = element_size(c);
        OpCost cost{e * s + 8.0 * o.rows, e * s, 0.0};
        cost.bytes_made = std::max(o.n - o.rows, int64_t{0}) * static_cast<double>(o.cols) * s;
        return cost;
      },
      .sweep = {{"w[50,16] idx[3,4]", [](SweepInputs& in) {
                   return embedding(in.randn({50, 16}), in.indices({3, 4}, 50));
                 }}},
      .ulp_bound = 0,   // table rows copied: nothing is rounded
  };
}

}  // namespace fourfold
