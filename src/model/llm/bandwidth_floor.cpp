#include "model/llm/bandwidth_floor.h"

namespace fourfold::model {

DecodeFloor decode_floor(const Decoder& d, double context, double read_gb_per_s) {
  DecodeFloor f;
  f.weight_bytes = d.weights().active_bytes_per_token;
  f.kv_bytes = static_cast<uint64_t>(context * static_cast<double>(d.cache().bytes_per_position()));
  f.state_bytes = 2 * d.linear_states().nbytes();
  f.read_gb_per_s = read_gb_per_s;
  return f;
}

double prefill_flops(const ModelConfig& c, int64_t tokens, int64_t cached, bool all_logits) {
  const double h = static_cast<double>(c.hidden_size), d = static_cast<double>(c.head_dim);
  const double q = static_cast<double>(c.num_attention_heads) * d, kv = static_cast<double>(c.num_key_value_heads) * d;
  const double t = static_cast<double>(tokens);
  // Positions each new token attends to, summed: cached + 1, cached + 2, ..., cached + tokens.
  const double keys = t * static_cast<double>(cached) + t * (t + 1) / 2;
  double macs = 0;
  const LinearAttentionConfig& la = c.linear;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    if (c.is_linear_layer(l)) {
      // in_proj_qkv, z, b, a and out_proj; the delta rule's S^T k, S^T q and update per token and value head.
      const double cd = static_cast<double>(la.conv_dim()), vd = static_cast<double>(la.value_dim());
      macs += t * h * (cd + vd + 2.0 * static_cast<double>(la.num_value_heads)) + t * vd * h;
      macs += t * 3.0 * vd * static_cast<double>(la.key_head_dim);
    } else {
      macs += t * (h * q * (c.attn_output_gate() ? 2 : 1) + 2 * h * kv + q * h);   // q (and its gate), k, v, o
      macs += 2 * keys * q;                                    // scores and weighted sums, every q head
    }
    if (c.is_moe_layer(l))
      macs += t * (static_cast<double>(c.num_experts) * h +
                   static_cast<double>(c.num_experts_per_tok) * 3 * static_cast<double>(c.moe_intermediate_size) * h +
                   (c.shared_expert_intermediate_size > 0
                        ? (3 * static_cast<double>(c.shared_expert_intermediate_size) + 1) * h   // and its gate
                        : 0.0));
    else
      macs += t * 3 * static_cast<double>(c.intermediate_size) * h;
  }
  macs += (all_logits ? t : 1.0) * static_cast<double>(c.vocab_size) * h;
  return 2 * macs;
}

}  // namespace fourfold::model
