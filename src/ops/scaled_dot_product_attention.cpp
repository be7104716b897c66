// scaled_dot_product_attention and its backward: checks, canonical [B, H, L, E] shapes and routing.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

// One checked call in the canonical form op_args.h describes, shared by forward and backward so that both
// accept exactly the same arguments.
struct CanonicalAttention {
  Tensor q, k, v;   // [B, Hq, L, E], [B, Hk, S, E], [B, Hk, S, Ev]
  Tensor mask;      // undefined, or expanded to [B, Hq, L, S]
  double scale = 0.0;
  int64_t group = 1;
  Shape out_shape;  // [..., Hq, L, Ev]
  Shape batch_out;  // [B, Hq, L, Ev]
};

std::string shape_of(const Tensor& t) { return "shape " + shape_string(t.shape()); }

const char* causal_name(CausalMode mode) {
  return mode == CausalMode::top_left ? "causal = top_left" : "causal = lower_right";
}

CanonicalAttention canonicalize(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                                const AttentionOptions& options) {
  check::dtype_in(op, "q", q, check::kFloatTypes);
  check::dtype_in(op, "k", k, check::kFloatTypes);
  check::dtype_in(op, "v", v, check::kFloatTypes);
  check::same_dtype(op, "k", k, "q", q);
  check::same_dtype(op, "v", v, "q", q);
  check::rank_at_least(op, "q", q, 3);
  const int rank = q.dim();
  const std::string layout_k = fmt::format("a {}-D tensor [..., Hk, S, E] (the rank of 'q')", rank);
  if (k.dim() != rank) fail<ShapeError>(op, "k", layout_k, shape_of(k));
  if (v.dim() != rank) fail<ShapeError>(op, "v", fmt::format("a {}-D tensor [..., Hk, S, Ev] (the rank of 'q')", rank), shape_of(v));

  const Shape lead(q.shape().begin(), q.shape().end() - 3);
  const Shape lead_k(k.shape().begin(), k.shape().end() - 3);
  const Shape lead_v(v.shape().begin(), v.shape().end() - 3);
  if (lead_k != lead) fail<ShapeError>(op, "k", fmt::format("leading dims {} (those of 'q')", shape_string(lead)), shape_of(k));
  if (lead_v != lead) fail<ShapeError>(op, "v", fmt::format("leading dims {} (those of 'q')", shape_string(lead)), shape_of(v));

  const int64_t hq = q.size(-3), l = q.size(-2), e = q.size(-1);
  const int64_t hk = k.size(-3), s = k.size(-2), ev = v.size(-1);
  check::size_is(op, "k", k, -1, e, "E, the last dim of 'q'");
  check::size_is(op, "v", v, -3, hk, "Hk, the heads of 'k'");
  check::size_is(op, "v", v, -2, s, "S, the keys of 'k'");

  CanonicalAttention c;
  if (!options.enable_gqa) {
    if (hk != hq)
      fail<ShapeError>(op, "k", fmt::format("{} heads at dim -3, as 'q' (enable_gqa is off)", hq), shape_of(k));
  } else {
    // An empty kv head dim can only serve an empty q head dim.
    if (hk == 0 ? hq != 0 : hq % hk != 0)
      fail<ShapeError>(op, "k", fmt::format("a head count at dim -3 that divides the {} heads of 'q' (enable_gqa)", hq),
                       shape_of(k));
    c.group = hk == 0 ? 1 : hq / hk;
  }

  int64_t batch = 1;
  for (int64_t d : lead) batch *= d;

  if (options.attn_mask) {
    const Tensor& m = *options.attn_mask;
    check::defined(op, "attn_mask", m);
    check::on_cpu(op, "attn_mask", m);
    if (options.causal != CausalMode::none)
      fail<ValueError>(op, "attn_mask", "no mask together with causal (as PyTorch)",
                       fmt::format("a mask and {}", causal_name(options.causal)));
    // fourfold's one-dtype rule: a float mask has q's dtype (PyTorch also takes a float32 one).
    if (m.dtype() != DType::boolean && m.dtype() != q.dtype())
      fail<DTypeError>(op, "attn_mask", fmt::format("dtype bool or {} (the dtype of 'q')", dtype_name(q.dtype())),
                       std::string(dtype_name(m.dtype())));
    Shape target = lead;
    target.insert(target.end(), {hq, l, s});
    bool fits = m.dim() <= static_cast<int>(target.size());
    for (int i = 1; fits && i <= m.dim(); ++i) {
      const int64_t have = m.shape()[m.dim() - i];
      fits = have == 1 || have == target[target.size() - i];
    }
    if (!fits)
      fail<ShapeError>(op, "attn_mask", fmt::format("a shape that broadcasts to {} ([..., Hq, L, S])", shape_string(target)),
                       shape_of(m));
    c.mask = m.expand(target).reshape({batch, hq, l, s});
  }

  c.q = q.reshape({batch, hq, l, e});
  c.k = k.reshape({batch, hk, s, e});
  c.v = v.reshape({batch, hk, s, ev});
  c.scale = options.scale.value_or(1.0 / std::sqrt(static_cast<double>(e)));
  c.out_shape = lead;
  c.out_shape.insert(c.out_shape.end(), {hq, l, ev});
  c.batch_out = {batch, hq, l, ev};
  return c;
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& options) {
  const CanonicalAttention c = canonicalize("scaled_dot_product_attention", q, k, v, options);
  Tensor out = Tensor::empty(c.out_shape, q.dtype());
  Tensor out_view = out.view(c.batch_out);
  const AttentionArgs args{c.q, c.k, c.v, c.mask.defined() ? &c.mask : nullptr, options.causal, c.scale, c.group, out_view};
  FOURFOLD_DISPATCH(scaled_dot_product_attention, args);
  return out;
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const OptTensor& attn_mask,
                                    bool is_causal, std::optional<double> scale, bool enable_gqa) {
  AttentionOptions options;
  options.attn_mask = attn_mask;
  options.causal = is_causal ? CausalMode::top_left : CausalMode::none;
  options.scale = scale;
  options.enable_gqa = enable_gqa;
  return scaled_dot_product_attention(q, k, v, options);
}

AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention_backward";
  const CanonicalAttention c = canonicalize(op, q, k, v, options);
  check::dtype_in(op, "grad_out", grad_out, check::kFloatTypes);
  check::same_dtype(op, "grad_out", grad_out, "q", q);
  if (grad_out.shape() != c.out_shape)
    fail<ShapeError>(op, "grad_out", "the output shape " + shape_string(c.out_shape) + " ([..., Hq, L, Ev])",
                     shape_of(grad_out));
  AttentionGrads grads{Tensor::empty(q.shape(), q.dtype()), Tensor::empty(k.shape(), q.dtype()),
                       Tensor::empty(v.shape(), q.dtype())};
  Tensor grad_q = grads.grad_q.view(c.q.shape());
  Tensor grad_k = grads.grad_k.view(c.k.shape());
  Tensor grad_v = grads.grad_v.view(c.v.shape());
  const Tensor g = grad_out.reshape(c.batch_out);
  Tensor unused_out;
  const AttentionArgs forward{c.q, c.k, c.v, c.mask.defined() ? &c.mask : nullptr, options.causal, c.scale, c.group,
                              unused_out};
  const AttentionBackwardArgs args{g, forward, grad_q, grad_k, grad_v};
  FOURFOLD_DISPATCH(scaled_dot_product_attention_backward, args);
  return grads;
}

}  // namespace fourfold
