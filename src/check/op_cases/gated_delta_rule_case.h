// The rows of gated_delta_rule (gated_delta_rule.cpp, and gated_delta_rule_chunked.cpp for a prefill in chunks):
// T tokens of a Gated DeltaNet layer, kv_heads key heads and heads value heads of head dim cols (keys and
// values alike), the gates fused (raw a and b with A_log and dt_bias, as the engine calls it), a nonzero state.
#pragma once

#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold::delta_rule_case {

inline std::string shape(const RowOpCase& o) {
  return fmt::format("q[{},{},{}] v[{},{},{}] state", o.rows, o.kv_heads, o.cols, o.rows, o.heads, o.cols);
}

inline std::optional<RowOpProblem> check(const RowOpCase& o) {
  if (o.heads % o.kv_heads != 0) return RowOpProblem{"heads", fmt::format("a multiple of kv_heads={}", o.kv_heads)};
  return std::nullopt;
}

inline BenchCall call(const BenchCase& c, const BenchInputs& in, GatedDeltaMode mode) {
  const RowOpCase& o = case_params<RowOpCase>(c);
  const int64_t t = o.rows, hk = o.kv_heads, hv = o.heads, d = o.cols;
  const Tensor q = in({1, t, hk, d}, 0), k = in({1, t, hk, d}, 1), v = in({1, t, hv, d}, 2);
  const Tensor a = in({1, t, hv}, 3), b = in({1, t, hv}, 4, 2.0);
  GatedDeltaRuleOptions options;
  options.mode = mode;
  options.a_log = in({hv}, 5, 2.0);
  options.dt_bias = in({hv}, 6);
  // A state of unit-size columns, f32 (f64 for the oracle); each call starts from a copy of it, since the op
  // updates it in place and every call must compute the same result.
  const Tensor state = in.wide(bench_tensor({1, hv, d, d}, DType::f32, in.seed() + 7, 0.1));
  return [=] { return gated_delta_rule(q, k, v, a, b, state.clone(), options); };
}

// q, k, v, the raw gates and the state in; out and the state out, and the copy of the state (read and written
// once more). Flops: per token and value head, the state's two products (S^T k, S^T q) and its update.
inline OpCost cost(const BenchCase& c) {
  const RowOpCase& o = case_params<RowOpCase>(c);
  const double s = element_size(c), t = static_cast<double>(o.rows), d = static_cast<double>(o.cols);
  const double hk = static_cast<double>(o.kv_heads), hv = static_cast<double>(o.heads), state = hv * d * d * 4.0;
  const double in = (2 * t * hk * d + t * hv * d + 2 * t * hv) * s;
  return OpCost{in + 2 * state, t * hv * d * s + 2 * state, 6.0 * t * hv * d * d};
}

// An entry's op-time part for the rows in one order of work (each case file adds what is its own).
template <GatedDeltaMode Mode>
OpCases rows() {
  return {.op = "gated_delta_rule",
          .row_op = {.fields = {"rows", "heads", "kv_heads", "cols"}, .shape = &shape, .check = &check},
          .call = [](const BenchCase& c, const BenchInputs& in) { return call(c, in, Mode); },
          .cost = &cost};
}

}  // namespace fourfold::delta_rule_case
