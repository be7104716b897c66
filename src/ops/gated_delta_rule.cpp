// gated_delta_rule: checks and routing (auto, the mode, is each tier's own choice).
#include <cmath>

#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

constexpr const char* kOp = "gated_delta_rule";

// Per-head parameters of the fused gates: [Hv], f32 (f64 for the oracle) or the model's dtype.
void check_head_vector(const char* arg, const Tensor& t, int64_t heads) {
  check::dtype_in(kOp, arg, t, check::kFloatTypes);
  check::shape_is(kOp, arg, t, {heads}, "[Hv]");
}

}  // namespace

Tensor gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g, const Tensor& beta,
                        const OptTensor& state, const GatedDeltaRuleOptions& o) {
  check::dtype_in(kOp, "q", q, check::kFloatTypes);
  check::dtype_in(kOp, "k", k, check::kFloatTypes);
  check::dtype_in(kOp, "v", v, check::kFloatTypes);
  check::same_dtype(kOp, "k", k, "q", q);
  check::same_dtype(kOp, "v", v, "q", q);
  check::rank(kOp, "q", q, 4, "[B, T, Hk, Dk]");
  check::rank(kOp, "v", v, 4, "[B, T, Hv, Dv]");
  const int64_t b = q.size(0), t = q.size(1), hk = q.size(2), dk = q.size(3), hv = v.size(2), dv = v.size(3);
  check::shape_is(kOp, "k", k, q.shape(), "(the shape of 'q', [B, T, Hk, Dk])");
  check::size_is(kOp, "v", v, 0, b, "B, the batch of 'q'");
  check::size_is(kOp, "v", v, 1, t, "T, the tokens of 'q'");
  if (hk < 1 || hv % hk != 0)
    fail<ShapeError>(kOp, "v", fmt::format("value heads Hv a multiple of the key heads Hk = {}", hk),
                     fmt::format("shape {}", shape_string(v.shape())));
  if (dk < 1 || dv < 1)
    fail<ShapeError>(kOp, "q", "head dims Dk and Dv >= 1", fmt::format("Dk {}, Dv {}", dk, dv));
  const bool fused = o.a_log.has_value();
  if (fused != o.dt_bias.has_value())
    fail<ValueError>(kOp, fused ? "dt_bias" : "a_log", "given together with the other (the fused gates need both)",
                     "missing");
  // g: the log decay in f32 (what transformers passes), or with fused gates the raw gate a in any float dtype.
  if (fused) check::dtype_in(kOp, "g", g, check::kFloatTypes);
  else check::dtype_in(kOp, "g", g, {DType::f32, DType::f64});
  check::dtype_in(kOp, "beta", beta, check::kFloatTypes);
  check::shape_is(kOp, "g", g, {b, t, hv}, "[B, T, Hv]");
  check::shape_is(kOp, "beta", beta, {b, t, hv}, "[B, T, Hv]");
  if (fused) {
    check_head_vector("a_log", *o.a_log, hv);
    check_head_vector("dt_bias", *o.dt_bias, hv);
  }
  Tensor s;
  if (state) {
    s = *state;
    check::dtype_in(kOp, "state", s, {DType::f32, DType::f64});
    check::shape_is(kOp, "state", s, {b, hv, dk, dv}, "[B, Hv, Dk, Dv]");
    const std::pair<const char*, const Tensor*> inputs[] = {{"q", &q}, {"k", &k}, {"v", &v}, {"g", &g}, {"beta", &beta}};
    for (const auto& [name, input] : inputs) check::disjoint(kOp, "state", s, name, *input);
  }
  if (o.chunk_size < 1 || o.chunk_size > 1024)
    fail<ValueError>(kOp, "chunk_size", "in [1, 1024]", std::to_string(o.chunk_size));
  const double scale = o.scale.value_or(1.0 / std::sqrt(static_cast<double>(dk)));
  if (!std::isfinite(scale)) fail<ValueError>(kOp, "scale", "a finite number", fmt::format("{}", scale));
  Tensor out = Tensor::empty({b, t, hv, dv}, v.dtype());
  const GatedDeltaRuleArgs args{q,     k,     v,    g,    beta, fused ? &*o.a_log : nullptr, fused ? &*o.dt_bias : nullptr,
                                state ? &s : nullptr, scale, o.qk_l2norm, o.mode, o.chunk_size, out};
  FOURFOLD_DISPATCH(gated_delta_rule, args);
  return out;
}

}  // namespace fourfold
