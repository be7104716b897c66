// The Gated DeltaNet ops of the 2026 Qwen hybrids: causal_conv1d and gated_delta_rule update their state
// argument in place (schema alias annotations say so), rms_norm_gated is a plain function.
#include <torch/library.h>

#include "tensor_bridge.h"

namespace fourfold_torch {
namespace {

at::Tensor causal_conv1d(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                         const std::optional<at::Tensor>& conv_state, bool silu) {
  return run_op([&] {
    return to_torch(fourfold::causal_conv1d(to_fourfold(x, "causal_conv1d", "x"),
                                            to_fourfold(weight, "causal_conv1d", "weight"),
                                            to_fourfold(bias, "causal_conv1d", "bias"),
                                            to_fourfold(conv_state, "causal_conv1d", "conv_state"), silu));
  });
}

// order (the C++ API's GatedDeltaRuleOptions::mode; the schema cannot name an argument "mode", which PyTorch's
// dispatch to a torch function mode takes as its own keyword): "auto", "recurrent" or "chunked".
fourfold::GatedDeltaMode delta_mode(const std::string& order) {
  if (order == "auto") return fourfold::GatedDeltaMode::auto_;
  if (order == "recurrent") return fourfold::GatedDeltaMode::recurrent;
  if (order == "chunked") return fourfold::GatedDeltaMode::chunked;
  refuse("gated_delta_rule", "order", "\"auto\", \"recurrent\" or \"chunked\"", "\"" + order + "\"");
}

at::Tensor gated_delta_rule(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                            const at::Tensor& beta, const std::optional<at::Tensor>& state,
                            const std::optional<at::Tensor>& a_log, const std::optional<at::Tensor>& dt_bias,
                            const std::string& order, std::optional<double> scale, bool qk_l2norm,
                            int64_t chunk_size) {
  return run_op([&] {
    const char* op = "gated_delta_rule";
    fourfold::GatedDeltaRuleOptions o;
    o.mode = delta_mode(order);
    o.scale = scale;
    o.qk_l2norm = qk_l2norm;
    o.chunk_size = chunk_size;
    o.a_log = to_fourfold(a_log, op, "a_log");
    o.dt_bias = to_fourfold(dt_bias, op, "dt_bias");
    return to_torch(fourfold::gated_delta_rule(to_fourfold(q, op, "q"), to_fourfold(k, op, "k"), to_fourfold(v, op, "v"),
                                               to_fourfold(g, op, "g"), to_fourfold(beta, op, "beta"),
                                               to_fourfold(state, op, "state"), o));
  });
}

at::Tensor rms_norm_gated(const at::Tensor& x, const at::Tensor& gate, const std::optional<at::Tensor>& weight,
                          double eps) {
  return run_op([&] {
    return to_torch(fourfold::rms_norm_gated(to_fourfold(x, "rms_norm_gated", "x"),
                                             to_fourfold(gate, "rms_norm_gated", "gate"),
                                             to_fourfold(weight, "rms_norm_gated", "weight"), eps));
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(fourfold, m) {
  m.def("causal_conv1d(Tensor x, Tensor weight, Tensor? bias=None, Tensor(a!)? conv_state=None, bool silu=False) "
        "-> Tensor");
  m.def("gated_delta_rule(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, Tensor(a!)? state=None, "
        "Tensor? a_log=None, Tensor? dt_bias=None, str order=\"auto\", float? scale=None, bool qk_l2norm=True, "
        "int chunk_size=64) -> Tensor");
  m.def("rms_norm_gated(Tensor x, Tensor gate, Tensor? weight=None, float eps=1e-06) -> Tensor");
}

TORCH_LIBRARY_IMPL(fourfold, CPU, m) {
  m.impl("causal_conv1d", &causal_conv1d);
  m.impl("gated_delta_rule", &gated_delta_rule);
  m.impl("rms_norm_gated", &rms_norm_gated);
}

}  // namespace fourfold_torch
