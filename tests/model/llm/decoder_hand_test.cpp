// A one-layer model computed by hand (explicit loops in double over the small tensors) against the engine's
// logits: dense Qwen3 (q/k norms), Llama (rope_scaling) and Qwen3-MoE (router, top-k, renormalisation).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

#include "model/llm/decoder.h"
#include "model/llm/presets.h"
#include "model/llm/weight_layout.h"
#include "model/model_test_support.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

using Vec = std::vector<double>;

struct Hand {
  const ModelConfig& c;
  const TensorMap& w;
  Vec get(const std::string& name) const { return w.at(name).to_vector(); }
  // y = W x, W [out, in] row-major
  static Vec matvec(const Vec& W, const Vec& x) {
    const size_t in = x.size(), out = W.size() / in;
    Vec y(out, 0.0);
    for (size_t o = 0; o < out; ++o)
      for (size_t i = 0; i < in; ++i) y[o] += W[o * in + i] * x[i];
    return y;
  }
  Vec norm(const Vec& x, const Vec& weight) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double r = 1.0 / std::sqrt(ss / x.size() + c.rms_norm_eps);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * r * weight[i];
    return y;
  }
  static double silu(double v) { return v / (1.0 + std::exp(-v)); }
  Vec inv_freq() const {
    const int64_t half = c.head_dim / 2;
    Vec f(half);
    for (int64_t i = 0; i < half; ++i) f[i] = std::pow(c.rope_theta, -2.0 * i / c.head_dim);
    if (c.rope_scaling) {
      const RopeScaling& s = *c.rope_scaling;
      const double old = s.original_max_position_embeddings;
      for (double& v : f) {
        const double wl = 2 * std::numbers::pi / v;
        if (wl > old / s.low_freq_factor) v /= s.factor;
        else if (wl >= old / s.high_freq_factor) {
          const double sm = (old / wl - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
          v = (1 - sm) * v / s.factor + sm * v;
        }
      }
    }
    return f;
  }
  // Rotates one head vector [D] at position p (half-split pairs (i, i + D/2)).
  void rotate(double* v, int64_t p) const {
    const Vec f = inv_freq();
    const int64_t half = c.head_dim / 2;
    for (int64_t i = 0; i < half; ++i) {
      const double a = v[i], b = v[i + half], cs = std::cos(p * f[i]), sn = std::sin(p * f[i]);
      v[i] = a * cs - b * sn;
      v[i + half] = b * cs + a * sn;
    }
  }
  Vec mlp(const Vec& x) const {
    if (!c.is_moe_layer(0)) {
      const Vec g = matvec(get(layer_weight(0, "mlp.gate_proj.weight")), x);
      const Vec u = matvec(get(layer_weight(0, "mlp.up_proj.weight")), x);
      Vec h(g.size());
      for (size_t i = 0; i < h.size(); ++i) h[i] = silu(g[i]) * u[i];
      return matvec(get(layer_weight(0, "mlp.down_proj.weight")), h);
    }
    const Vec logits = matvec(get(layer_weight(0, "mlp.gate.weight")), x);
    const double mx = *std::max_element(logits.begin(), logits.end());
    Vec p(logits.size());
    double sum = 0;
    for (size_t e = 0; e < p.size(); ++e) sum += p[e] = std::exp(logits[e] - mx);
    for (double& v : p) v /= sum;
    std::vector<size_t> order(p.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
    order.resize(c.num_experts_per_tok);
    double kept = 0;
    for (size_t e : order) kept += p[e];
    Vec y(x.size(), 0.0);
    for (size_t e : order) {
      const double weight = c.norm_topk_prob ? p[e] / kept : p[e];
      const Vec g = matvec(get(expert_weight(0, e, "gate_proj")), x);
      const Vec u = matvec(get(expert_weight(0, e, "up_proj")), x);
      Vec h(g.size());
      for (size_t i = 0; i < h.size(); ++i) h[i] = silu(g[i]) * u[i];
      const Vec d = matvec(get(expert_weight(0, e, "down_proj")), h);
      for (size_t i = 0; i < y.size(); ++i) y[i] += weight * d[i];
    }
    return y;
  }
  // Logits [T, V] of one layer over `tokens` from position 0.
  std::vector<Vec> logits(const std::vector<int64_t>& tokens) const {
    const int64_t H = c.hidden_size, D = c.head_dim, Hq = c.num_attention_heads, Hk = c.num_key_value_heads;
    const Vec E = get("model.embed_tokens.weight");
    std::vector<Vec> xs, ks, vs, out;
    for (size_t t = 0; t < tokens.size(); ++t) {
      Vec x(E.begin() + tokens[t] * H, E.begin() + (tokens[t] + 1) * H);
      const Vec h = norm(x, get(layer_weight(0, "input_layernorm.weight")));
      Vec q = matvec(get(layer_weight(0, "self_attn.q_proj.weight")), h);
      Vec k = matvec(get(layer_weight(0, "self_attn.k_proj.weight")), h);
      Vec v = matvec(get(layer_weight(0, "self_attn.v_proj.weight")), h);
      if (c.attention_bias) {
        const Vec bq = get(layer_weight(0, "self_attn.q_proj.bias")), bk = get(layer_weight(0, "self_attn.k_proj.bias")),
                  bv = get(layer_weight(0, "self_attn.v_proj.bias"));
        for (size_t i = 0; i < q.size(); ++i) q[i] += bq[i];
        for (size_t i = 0; i < k.size(); ++i) k[i] += bk[i], v[i] += bv[i];
      }
      for (int64_t head = 0; head < Hq; ++head) {
        if (c.has_qk_norm()) {
          const Vec n = norm(Vec(q.begin() + head * D, q.begin() + (head + 1) * D), get(layer_weight(0, "self_attn.q_norm.weight")));
          std::copy(n.begin(), n.end(), q.begin() + head * D);
        }
        rotate(&q[head * D], static_cast<int64_t>(t));
      }
      for (int64_t head = 0; head < Hk; ++head) {
        if (c.has_qk_norm()) {
          const Vec n = norm(Vec(k.begin() + head * D, k.begin() + (head + 1) * D), get(layer_weight(0, "self_attn.k_norm.weight")));
          std::copy(n.begin(), n.end(), k.begin() + head * D);
        }
        rotate(&k[head * D], static_cast<int64_t>(t));
      }
      ks.push_back(k);
      vs.push_back(v);
      Vec attn(Hq * D, 0.0);
      for (int64_t head = 0; head < Hq; ++head) {
        const int64_t kvh = head / (Hq / Hk);
        Vec s(t + 1);
        for (size_t j = 0; j <= t; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += q[head * D + d] * ks[j][kvh * D + d];
          s[j] = dot / std::sqrt(static_cast<double>(D));
        }
        const double mx = *std::max_element(s.begin(), s.end());
        double sum = 0;
        for (double& e : s) sum += e = std::exp(e - mx);
        for (size_t j = 0; j <= t; ++j)
          for (int64_t d = 0; d < D; ++d) attn[head * D + d] += s[j] / sum * vs[j][kvh * D + d];
      }
      const Vec o = matvec(get(layer_weight(0, "self_attn.o_proj.weight")), attn);
      for (int64_t i = 0; i < H; ++i) x[i] += o[i];
      const Vec m = mlp(norm(x, get(layer_weight(0, "post_attention_layernorm.weight"))));
      for (int64_t i = 0; i < H; ++i) x[i] += m[i];
      const Vec f = norm(x, get("model.norm.weight"));
      out.push_back(matvec(get(c.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight"), f));
    }
    return out;
  }
};

ModelConfig small_config(const std::string& preset) {
  ModelConfig c = preset_config(preset, 1);
  c.hidden_size = 16;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 8;
  c.intermediate_size = 24;
  c.vocab_size = 40;
  if (c.num_experts > 0) {
    c.num_experts = 6;
    c.num_experts_per_tok = 2;
    c.moe_intermediate_size = 12;
  }
  return c;
}

void expect_hand_equal(const ModelConfig& c) {
  const TensorMap w = synthetic_weights(c, DType::f32, 7);
  const std::vector<int64_t> tokens = {3, 17, 0, 39, 17, 5};
  const std::vector<Vec> want = Hand{c, w}.logits(tokens);
  Decoder d = testing::make_decoder(c, w);
  const Tensor got = d.forward(tokens, /*all_logits=*/true);
  ASSERT_EQ(got.shape(), (Shape{6, c.vocab_size}));
  Vec flat;
  for (const Vec& row : want) flat.insert(flat.end(), row.begin(), row.end());
  EXPECT_TRUE(fourfold::testing::all_close(got, flat, 1e-4, 1e-4));
}

TEST(DecoderByHand, Qwen3DenseOneLayer) {
  fourfold::testing::ReferenceOnly reference;
  expect_hand_equal(small_config("tiny-qwen3"));
}

TEST(DecoderByHand, LlamaWithRopeScalingOneLayer) {
  fourfold::testing::ReferenceOnly reference;
  ModelConfig c = small_config("tiny-llama");
  // Scaling that moves some of the 4 frequencies: original context 16, so wavelengths above 16 are remapped.
  c.rope_scaling->original_max_position_embeddings = 16;
  c.rope_theta = 10000.0;
  expect_hand_equal(c);
}

TEST(DecoderByHand, Qwen2WithAttentionBiasOneLayer) {
  fourfold::testing::ReferenceOnly reference;
  ModelConfig c = small_config("tiny-qwen3");
  c.model_type = "qwen2";   // no q/k norms
  c.attention_bias = true;
  expect_hand_equal(c);
}

TEST(DecoderByHand, Qwen3MoeOneLayer) {
  fourfold::testing::ReferenceOnly reference;
  expect_hand_equal(small_config("tiny-moe"));
  ModelConfig c = small_config("tiny-moe");
  c.norm_topk_prob = false;
  expect_hand_equal(c);
}

TEST(DecoderByHand, EveryTierMatchesTheHandModel) {
  const ModelConfig c = small_config("tiny-moe");
  for (const char* tier : {"generic", "dedicated"}) {
    SCOPED_TRACE(tier);
    ScopedPolicy scope(Policy::parse(tier));
    expect_hand_equal(c);
  }
}

}  // namespace
}  // namespace fourfold::model
