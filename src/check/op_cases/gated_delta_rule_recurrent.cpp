// gated_delta_rule token by token at a prompt's length: the recurrent order of work against the chunked one of
// the same rows (gated_delta_rule.cpp), so that the engine's choice per length is a measured one.
#include "check/op_cases/gated_delta_rule_case.h"

namespace fourfold {

FOURFOLD_OP_CASES(gated_delta_rule_recurrent) {
  return {
      .op = "gated_delta_rule",
      .row_op = {.fields = {"rows", "heads", "kv_heads", "cols"},
                 .shape = &delta_rule_case::shape,
                 .check = &delta_rule_case::check},
      .call = [](const BenchCase& c, const BenchInputs& in) {
        return delta_rule_case::call(c, in, GatedDeltaMode::recurrent);
      },
      .cost = &delta_rule_case::cost,
  };
}

}  // namespace fourfold
