#include "model/llm/attention.h"

namespace fourfold::model {

Tensor attention(const Tensor& x, const AttentionWeights& w, const ModelConfig& c, const Tensor& cos, const Tensor& sin,
                 KvCache& cache, int64_t layer, int64_t start) {
  const int64_t t = x.size(0), hq = c.num_attention_heads, hk = c.num_key_value_heads, d = c.head_dim;
  // The hybrids' q_proj yields each head's q and its output gate side by side: two strided views.
  const Tensor q_out = project(x, w.q);
  Tensor q = c.attn_output_gate() ? q_out.view({t, hq, 2, d}).select(2, 0) : q_out.view({t, hq, d});
  Tensor k = project(x, w.k).view({t, hk, d});
  const Tensor v = project(x, w.v).view({t, hk, d});
  if (w.q_norm) {
    q = rms_norm(q, {d}, w.q_norm, c.rms_norm_eps);
    k = rms_norm(k, {d}, w.k_norm, c.rms_norm_eps);
  }
  // cos/sin [T, 1, D/2] broadcast over the heads; q and k are this call's own tensors, so rotated in place.
  rotary_embedding_(q, cos.unsqueeze(1), sin.unsqueeze(1));
  rotary_embedding_(k, cos.unsqueeze(1), sin.unsqueeze(1));
  cache.write(layer, start, k, v);
  // Attention runs in the cache's dtype (sdpa takes one dtype): a bf16 cache gives bf16 attention, as PyTorch
  // does with a bf16 cache; q is converted, not the cache.
  const Tensor qh = q.to(cache.dtype()).view({1, t, hq, d}).transpose(1, 2);
  AttentionOptions options;
  options.causal = CausalMode::lower_right;
  options.enable_gqa = hq != hk;
  const Tensor o = scaled_dot_product_attention(qh, cache.keys(layer, start + t), cache.values(layer, start + t), options);
  Tensor heads = o.transpose(1, 2).reshape({t, hq * d}).to(x.dtype());
  // attn * sigmoid(gate), each rounded to the activations' dtype as transformers rounds them.
  if (c.attn_output_gate()) heads = mul(heads, sigmoid(q_out.view({t, hq, 2, d}).select(2, 1)).view({t, hq * d}));
  return project(heads, w.o);
}

}  // namespace fourfold::model
