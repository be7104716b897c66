// bind_weights: the checks against weight_layout first (so a bad checkpoint fails before any copy), then the
// binding layer by layer.
#include "model/llm/model_weights.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "fourfold/errors.h"
#include "core/fp4_blocks.h"
#include "model/llm/expert_stack.h"
#include "model/llm/fp4_checkpoint.h"
#include "model/formats/safetensors.h"
#include "model/llm/weight_layout.h"

namespace fourfold::model {
namespace {

bool is_high_precision(DType d) { return d == DType::bf16 || d == DType::f16 || d == DType::f32; }

std::vector<int64_t> identity_order(int64_t n) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  return order;
}

// The experts sorted by where their tensor lies in memory (by storage, then address): slot -> expert.
std::vector<int64_t> memory_order(const std::vector<Tensor>& parts) {
  std::vector<int64_t> order = identity_order(static_cast<int64_t>(parts.size()));
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return reinterpret_cast<uintptr_t>(parts[static_cast<size_t>(a)].data()) <
           reinterpret_cast<uintptr_t>(parts[static_cast<size_t>(b)].data());
  });
  return order;
}

std::vector<Tensor> in_order(const std::vector<Tensor>& parts, const std::vector<int64_t>& order) {
  std::vector<Tensor> out;
  for (int64_t e : order) out.push_back(parts[static_cast<size_t>(e)]);
  return out;
}

// An FP4 projection [out, in/2] with its block scale [out, in/block] and, if any, its global scale [1]
// (fp4_checkpoint.h names them).
void check_fp4(const WeightSpec& spec, const TensorMap& weights, const std::string& source, std::set<std::string>& expected) {
  const Tensor& t = weights.at(spec.name);
  const int64_t out = spec.shape[0], in = spec.shape[1];
  if (t.shape() != Shape{out, in / 2} || in % 2 != 0)
    fail<FormatError>(source, spec.name, fmt::format("shape [{}, {}] (FP4 pairs of [{}, {}])", out, in / 2, out, in),
                      shape_string(t.shape()));
  const std::string scale_name = fp4_scale_name(spec.name);
  const auto s = weights.find(scale_name);
  if (s == weights.end()) fail<FormatError>(source, scale_name, "the block scale of an FP4 weight", "missing");
  const DType sd = s->second.dtype();
  if (sd != DType::f8_e4m3fn && sd != DType::f8_e8m0fnu)
    fail<FormatError>(source, scale_name, "dtype float8_e4m3fn or float8_e8m0fnu", std::string(dtype_name(sd)));
  const int64_t block = fp4_block_size(sd);
  if (in % block != 0 || s->second.shape() != Shape{out, in / block})
    fail<FormatError>(source, scale_name, fmt::format("shape [{}, {}]", out, in / block), shape_string(s->second.shape()));
  expected.insert(scale_name);
  const std::string global_name = fp4_global_name(spec.name);
  if (const auto g = weights.find(global_name); g != weights.end()) {
    if (g->second.dtype() != DType::f32 || g->second.numel() != 1)
      fail<FormatError>(source, global_name, "float32 [1]", g->second.describe());
    expected.insert(global_name);
  }
}

void check_tensors(const ModelConfig& config, const TensorMap& weights, const std::string& source) {
  std::set<std::string> expected;
  for (const WeightSpec& spec : weight_layout(config)) {
    expected.insert(spec.name);
    const auto it = weights.find(spec.name);
    if (it == weights.end()) fail<FormatError>(source, spec.name, "a tensor of shape " + shape_string(spec.shape), "missing");
    const Tensor& t = it->second;
    const bool may_be_fp8 = spec.role == WeightRole::projection || spec.role == WeightRole::lm_head;
    if (may_be_fp8 && is_fp4(t.dtype())) {
      check_fp4(spec, weights, source, expected);
      continue;
    }
    if (t.shape() != spec.shape) fail<FormatError>(source, spec.name, "shape " + shape_string(spec.shape), shape_string(t.shape()));
    const bool fp8_ok = may_be_fp8 && is_fp8(t.dtype());
    if (!fp8_ok && !is_high_precision(t.dtype()))
      fail<FormatError>(source, spec.name,
                        may_be_fp8 ? "dtype bfloat16, float16, float32 or float8" : "dtype bfloat16, float16 or float32",
                        std::string(dtype_name(t.dtype())));
    if (!fp8_ok) continue;
    const std::string scale_name = fp8_scale_name(spec.name);
    expected.insert(scale_name);
    const Shape scale_shape = fp8_scale_shape(config, spec.shape);
    const auto s = weights.find(scale_name);
    if (s == weights.end())
      fail<FormatError>(source, scale_name, "the float32 scale of an FP8 weight, shape " + shape_string(scale_shape), "missing");
    if (s->second.dtype() != DType::f32)
      fail<FormatError>(source, scale_name, "dtype float32", std::string(dtype_name(s->second.dtype())));
    if (s->second.shape() != scale_shape)
      fail<FormatError>(source, scale_name, "shape " + shape_string(scale_shape), shape_string(s->second.shape()));
  }
  for (const auto& [name, t] : weights)
    if (!expected.count(name))
      fail<FormatError>(source, name, "only the tensors of a " + config.model_type + " checkpoint of this config",
                        "an extra tensor " + t.describe());
}

class Binder {
 public:
  Binder(TensorMap& weights, DType activation, ModelWeights& out) : w_(weights), act_(activation), out_(out) {}

  // Norms and biases: converted to the activation dtype (a few KB; the ops take one dtype).
  Tensor small(const std::string& name) {
    Tensor t = take(name);
    return t.dtype() == act_ ? t : t.to(act_);
  }
  // A zero-centred norm's weight as the norm multiplies by it: 1 + w, computed and kept in f32 (as transformers
  // computes it; in bf16 the sum would round).
  Tensor zero_centred(const std::string& name) {
    std::vector<double> w = take(name).to_vector();
    for (double& v : w) v = static_cast<double>(1.0f + static_cast<float>(v));
    return Tensor::from_vector(w, {static_cast<int64_t>(w.size())}, DType::f32);
  }
  Tensor f32(const std::string& name) { return take(name).to(DType::f32); }
  // A depthwise conv1d weight [C, 1, K] as causal_conv1d reads it in place: an f32 [K, C] seen as [C, K].
  Tensor conv_taps(const std::string& name) {
    const Tensor w = take(name);
    return w.squeeze(1).transpose(0, 1).to(DType::f32).contiguous().transpose(0, 1);
  }
  // A [V, H] or [out, in] weight for linear: in place when linear takes it under the activation dtype.
  Tensor linear_weight(const std::string& name) { return usable(take(name), name); }
  Projection projection(const std::string& weight_name, bool has_bias = false) {
    Projection p;
    const Tensor w = take(weight_name);
    if (is_fp8(w.dtype())) {
      p.weight = w;
      p.scale = take(fp8_scale_name(weight_name));
    } else if (is_fp4(w.dtype())) {
      p.weight = w;
      p.scale = take(fp4_scale_name(weight_name));
      if (w_.count(fp4_global_name(weight_name))) p.global = fp4_global_multiplier(take(fp4_global_name(weight_name))).view({});
    } else {
      p.weight = usable(w, weight_name);
    }
    if (has_bias) p.bias = small(weight_name.substr(0, weight_name.size() - 6) + "bias");   // "x.weight" -> "x.bias"
    return p;
  }
  // A layer's experts, each projection stacked [E, out, in]: views of the checkpoint when the layout allows
  // (see stack_experts), in the order the experts lie in memory when all three projections (and their scales)
  // agree on it, so that a name-ordered checkpoint (experts 0, 1, 10, 11, 2, ...) is used in place too.
  void experts(int64_t layer, int64_t count, const std::string& source, MoeExpertWeights& out) {
    struct Stack {
      const char* projection;
      Tensor* weights;
      OptTensor* scales;
      OptTensor* globals;
      std::vector<Tensor> parts, scale_parts, global_parts;
    };
    std::vector<Stack> stacks = {{"gate_proj", &out.gate, &out.gate_scale, &out.gate_global, {}, {}, {}},
                                 {"up_proj", &out.up, &out.up_scale, &out.up_global, {}, {}, {}},
                                 {"down_proj", &out.down, &out.down_scale, &out.down_global, {}, {}, {}}};
    for (Stack& st : stacks)
      for (int64_t e = 0; e < count; ++e) {
        const std::string name = expert_weight(layer, e, st.projection);
        st.parts.push_back(take(name));
        if (st.parts.back().dtype() != st.parts.front().dtype())
          fail<FormatError>(source, name,
                            "the dtype of expert 0 (" + std::string(dtype_name(st.parts.front().dtype())) + ")",
                            std::string(dtype_name(st.parts.back().dtype())));
        if (is_fp8(st.parts.back().dtype())) st.scale_parts.push_back(take(fp8_scale_name(name)));
        if (is_fp4(st.parts.back().dtype())) {
          st.scale_parts.push_back(take(fp4_scale_name(name)));
          if (w_.count(fp4_global_name(name))) st.global_parts.push_back(take(fp4_global_name(name)));
          if (!st.global_parts.empty() && st.global_parts.size() != st.scale_parts.size())
            fail<FormatError>(source, fp4_global_name(name), "a global scale for every expert or none", "missing");
        }
      }
    // Another order only where it makes every stack a view; else expert order (copying where needed), so
    // that weights built in memory keep their layout.
    std::vector<int64_t> order = memory_order(stacks[0].parts);
    for (const Stack& st : stacks)
      if (!stacked_view(in_order(st.parts, order)) ||
          (!st.scale_parts.empty() && !stacked_view(in_order(st.scale_parts, order))))
        order = identity_order(count);
    if (order != identity_order(count)) {
      out.slot_of_expert.assign(static_cast<size_t>(count), 0);
      for (int64_t slot = 0; slot < count; ++slot) out.slot_of_expert[static_cast<size_t>(order[slot])] = slot;
    }
    for (Stack& st : stacks) {
      const uint64_t before = out_.copied_bytes;
      *st.weights = stack_experts(in_order(st.parts, order), out_.copied_bytes);
      if (!st.scale_parts.empty()) *st.scales = stack_experts(in_order(st.scale_parts, order), out_.copied_bytes);
      if (!st.global_parts.empty()) {   // one multiplier per expert (slot order), computed from the stored divisors
        std::vector<double> g;
        for (const Tensor& t : in_order(st.global_parts, order)) g.push_back(t.to_vector()[0]);
        *st.globals = fp4_global_multiplier(Tensor::from_vector(g, {count}, DType::f32));
      }
      if (!is_fp8(st.weights->dtype()) && !is_fp4(st.weights->dtype())) {
        const Tensor converted = usable(*st.weights, expert_weight(layer, 0, st.projection));
        *st.weights = converted;
      }
      if (out_.copied_bytes > before)
        note(fmt::format("layer {} {}: experts not equally spaced in memory, stacked by one copy", layer,
                         st.projection),
             0);
    }
  }
  void note(const std::string& why, uint64_t bytes) {
    out_.copied_bytes += bytes;
    out_.copies.push_back(why);
  }

 private:
  Tensor take(const std::string& name) {
    auto it = w_.find(name);
    Tensor t = it->second;
    w_.erase(it);   // the map lets go: a tensor replaced by a copy is freed now, not at the end
    return t;
  }
  Tensor usable(const Tensor& w, const std::string& name) {
    const bool ok = w.dtype() == act_ || (act_ == DType::f32 && (w.dtype() == DType::bf16 || w.dtype() == DType::f16));
    if (ok) return w;
    note(fmt::format("{}: {} converted to {} (linear takes no {} weight under {} activations)", name,
                     dtype_name(w.dtype()), dtype_name(act_), dtype_name(w.dtype()), dtype_name(act_)),
         w.numel() * dtype_size(act_));
    return w.to(act_);
  }
  TensorMap& w_;
  DType act_;
  ModelWeights& out_;
};

uint64_t expert_bytes(const MoeExpertWeights& e) {
  uint64_t n = e.gate.nbytes() + e.up.nbytes() + e.down.nbytes();
  for (const OptTensor& s : {e.gate_scale, e.up_scale, e.down_scale, e.gate_global, e.up_global, e.down_global})
    n += s ? s->nbytes() : 0;
  return n;
}

void count_bytes(const ModelConfig& c, ModelWeights& m) {
  uint64_t active = 0, total = 0;
  const auto both = [&](uint64_t n) { active += n; total += n; };
  for (const LayerWeights& l : m.layers) {
    both(l.input_norm.nbytes() + l.post_attention_norm.nbytes());
    if (const auto& la = l.linear) {
      both(la->qkv.nbytes() + la->z.nbytes() + la->b.nbytes() + la->a.nbytes() + la->out.nbytes());
      both(la->conv.nbytes() + la->a_log.nbytes() + la->dt_bias.nbytes() + la->norm.nbytes());
    } else {
      const AttentionWeights& a = l.attention;
      both(a.q.nbytes() + a.k.nbytes() + a.v.nbytes() + a.o.nbytes());
      if (a.q_norm) both(a.q_norm->nbytes() + a.k_norm->nbytes());
    }
    if (l.mlp) both(l.mlp->gate.nbytes() + l.mlp->up.nbytes() + l.mlp->down.nbytes());
    if (l.moe) {
      both(l.moe->router.nbytes());
      if (const auto& s = l.moe->shared) both(s->gate.nbytes() + s->up.nbytes() + s->down.nbytes() + l.moe->shared_gate.nbytes());
      const uint64_t experts = expert_bytes(l.moe->experts);
      total += experts;
      active += experts / c.num_experts * c.num_experts_per_tok;
    }
  }
  both(m.final_norm.nbytes());
  active += m.lm_head.nbytes() + m.embed_tokens.nbytes() / c.vocab_size;
  total += m.embed_tokens.nbytes() + (c.tie_word_embeddings ? 0 : m.lm_head.nbytes());
  m.active_bytes_per_token = active;
  m.total_bytes = total;
}

}  // namespace

ModelWeights bind_weights(const ModelConfig& c, TensorMap weights, DType activation, const std::string& source) {
  if (activation != DType::f32 && activation != DType::bf16)
    fail<DTypeError>(source, "activation dtype", "float32 or bfloat16", std::string(dtype_name(activation)));
  check_tensors(c, weights, source);
  ModelWeights m;
  Binder b(weights, activation, m);
  const Tensor embed = weights.at("model.embed_tokens.weight");
  weights.erase("model.embed_tokens.weight");
  m.embed_tokens = embed;
  const auto norm = [&](const std::string& name) { return c.zero_centred_norms() ? b.zero_centred(name) : b.small(name); };
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    LayerWeights layer;
    layer.input_norm = norm(layer_weight(l, "input_layernorm.weight"));
    layer.post_attention_norm = norm(layer_weight(l, "post_attention_layernorm.weight"));
    if (c.is_linear_layer(l)) {
      const auto name = [&](const char* suffix) { return layer_weight(l, std::string("linear_attn.") + suffix); };
      LinearAttentionWeights la;
      la.qkv = b.projection(name("in_proj_qkv.weight"));
      la.z = b.projection(name("in_proj_z.weight"));
      la.b = b.projection(name("in_proj_b.weight"));
      la.a = b.projection(name("in_proj_a.weight"));
      la.out = b.projection(name("out_proj.weight"));
      la.conv = b.conv_taps(name("conv1d.weight"));
      la.a_log = b.f32(name("A_log"));
      la.dt_bias = b.f32(name("dt_bias"));
      la.norm = b.small(name("norm.weight"));
      layer.linear = std::move(la);
    } else {
      AttentionWeights& a = layer.attention;
      a.q = b.projection(layer_weight(l, "self_attn.q_proj.weight"), c.attention_bias);
      a.k = b.projection(layer_weight(l, "self_attn.k_proj.weight"), c.attention_bias);
      a.v = b.projection(layer_weight(l, "self_attn.v_proj.weight"), c.attention_bias);
      a.o = b.projection(layer_weight(l, "self_attn.o_proj.weight"), c.has_o_bias());
      if (c.has_qk_norm()) {
        a.q_norm = norm(layer_weight(l, "self_attn.q_norm.weight"));
        a.k_norm = norm(layer_weight(l, "self_attn.k_norm.weight"));
      }
    }
    if (c.is_moe_layer(l)) {
      MoeWeights moe;
      moe.router = b.linear_weight(layer_weight(l, "mlp.gate.weight"));
      b.experts(l, c.num_experts, source, moe.experts);
      if (c.shared_expert_intermediate_size > 0) {
        moe.shared = DenseMlpWeights{b.projection(layer_weight(l, "mlp.shared_expert.gate_proj.weight")),
                                     b.projection(layer_weight(l, "mlp.shared_expert.up_proj.weight")),
                                     b.projection(layer_weight(l, "mlp.shared_expert.down_proj.weight"))};
        moe.shared_gate = b.projection(layer_weight(l, "mlp.shared_expert_gate.weight"));
      }
      layer.moe = std::move(moe);
    } else {
      layer.mlp = DenseMlpWeights{b.projection(layer_weight(l, "mlp.gate_proj.weight")),
                                  b.projection(layer_weight(l, "mlp.up_proj.weight")),
                                  b.projection(layer_weight(l, "mlp.down_proj.weight"))};
    }
    m.layers.push_back(std::move(layer));
  }
  m.final_norm = norm("model.norm.weight");
  if (c.tie_word_embeddings) {
    const bool ok = embed.dtype() == activation || (activation == DType::f32 && embed.dtype() != DType::f32);
    m.lm_head.weight = ok ? embed : embed.to(activation);
    if (!ok) b.note("lm_head (tied): embed_tokens converted to the activation dtype", m.lm_head.nbytes());
  } else {
    m.lm_head = b.projection("lm_head.weight");
  }
  count_bytes(c, m);
  return m;
}

}  // namespace fourfold::model
