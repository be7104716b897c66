#include "model/llm/linear_attention.h"

namespace fourfold::model {

Tensor linear_attention(const Tensor& x, const LinearAttentionWeights& w, const ModelConfig& c, LinearStates& states,
                        int64_t layer) {
  const LinearAttentionConfig& la = c.linear;
  const int64_t t = x.size(0), hk = la.num_key_heads, hv = la.num_value_heads, dk = la.key_head_dim,
                dv = la.value_head_dim;
  const Tensor qkv = project(x, w.qkv), z = project(x, w.z), b = project(x, w.b), a = project(x, w.a);
  // The conv sees [1, C, T] with the channels contiguous per token, and keeps that layout: [1, T, C] rows.
  const Tensor mixed = causal_conv1d(qkv.view({1, t, la.conv_dim()}).transpose(1, 2), w.conv, std::nullopt,
                                     states.conv(layer), /*silu=*/true)
                           .transpose(1, 2);
  const Tensor q = mixed.narrow(2, 0, la.key_dim()).view({1, t, hk, dk});
  const Tensor k = mixed.narrow(2, la.key_dim(), la.key_dim()).view({1, t, hk, dk});
  const Tensor v = mixed.narrow(2, 2 * la.key_dim(), la.value_dim()).view({1, t, hv, dv});
  GatedDeltaRuleOptions options;
  options.qk_l2norm = true;
  options.a_log = w.a_log;
  options.dt_bias = w.dt_bias;
  const Tensor o = gated_delta_rule(q, k, v, a.view({1, t, hv}), b.view({1, t, hv}), states.recurrent(layer), options);
  const Tensor normed = rms_norm_gated(o.view({t * hv, dv}), z.view({t * hv, dv}), w.norm, c.rms_norm_eps);
  return project(normed.view({t, la.value_dim()}), w.out);
}

}  // namespace fourfold::model
