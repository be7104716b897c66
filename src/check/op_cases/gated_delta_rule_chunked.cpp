// gated_delta_rule in chunks of 64 at a prompt's length, transformers' prefill form, against the order the
// engine's auto picks on each tier (gated_delta_rule.cpp): the choice per tier is a measured one.
#include "check/op_cases/gated_delta_rule_case.h"

namespace fourfold {

FOURFOLD_OP_CASES(gated_delta_rule_chunked) { return delta_rule_case::rows<GatedDeltaMode::chunked>(); }

}  // namespace fourfold
