// Generic gated_delta_rule as eager PyTorch runs transformers' torch_recurrent_gated_delta_rule and
// torch_chunk_gated_delta_rule: the gates, the L2 norms, the heads repeated and transposed, each a pass into a
// temporary; then per token (recurrent) or per chunk (chunked) batched matrix products over the heads. The
// chunked form keeps transformers' f32 cumulative sums and builds the UT transform's inverse by forward
// substitution on its rows, as its export path does.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

float* f(const Tensor& t) { return t.data_as<float>(); }

// A contiguous f32 copy of any view.
Tensor dense(const Tensor& view) {
  Tensor out = empty_f32(view.shape());
  copy(view.dtype() == DType::f32 ? view : to_f32(view), out);
  return out;
}

// g and beta [B*T, Hv] f32, computed from a and b with the fused gates.
void gates(const GatedDeltaRuleArgs& a, Tensor& g, Tensor& beta) {
  const int64_t hv = a.v.size(2), rows = a.g.numel() / std::max<int64_t>(hv, 1);
  g = dense(a.g);
  beta = dense(a.beta);
  if (a.a_log == nullptr || rows == 0) return;
  const Tensor dt = to_f32(*a.dt_bias), alog = to_f32(*a.a_log);
  Tensor neg_a = empty_f32({hv});
  unary(Unary::exp, f(alog), f(neg_a), hv);
  unary(Unary::neg, f(neg_a), f(neg_a), hv);
  binary(Binary::add, f(g), f(dt), Broadcast::per_col, f(g), rows, hv);
  unary(Unary::softplus, f(g), f(g), rows * hv);
  binary(Binary::mul, f(g), f(neg_a), Broadcast::per_col, f(g), rows, hv);
  const int64_t n = rows * hv;
  unary(Unary::neg, f(beta), f(beta), n);
  unary(Unary::exp, f(beta), f(beta), n);
  affine(f(beta), 1.0f, 1.0f, f(beta), n);
  unary(Unary::reciprocal, f(beta), f(beta), n);
}

// x [B, T, Hk, D] -> [B, Hv, T, D] contiguous f32: L2-normalized when asked, scaled, each key head repeated for
// its group of value heads.
Tensor heads_first(const Tensor& x, int64_t hv, bool l2norm, float scale) {
  const int64_t b = x.size(0), t = x.size(1), h = x.size(2), d = x.size(3), rows = b * t * h;
  Tensor y = dense(x);
  if (l2norm && rows > 0 && d > 0) {
    Tensor sq = empty_f32({rows, d}), norm = empty_f32({rows});
    unary(Unary::square, f(y), f(sq), rows * d);
    row_reduce(Reduce::sum, f(sq), rows, d, f(norm));
    affine(f(norm), 1.0f, 1e-6f, f(norm), rows);
    unary(Unary::rsqrt, f(norm), f(norm), rows);
    binary(Binary::mul, f(y), f(norm), Broadcast::per_row, f(y), rows, d);
  }
  if (scale != 1.0f) affine(f(y), scale, 0.0f, f(y), rows * d);
  const Tensor repeated = y.view({b, t, h, 1, d}).expand({b, t, h, hv / h, d}).reshape({b, t, hv, d});
  return dense(repeated.permute({0, 2, 1, 3}));
}

// [B, T, Hv] -> [B*Hv, T] contiguous.
Tensor gates_first(const Tensor& g, int64_t b, int64_t t, int64_t hv) {
  return dense(g.view({b, t, hv}).permute({0, 2, 1})).view({b * hv, t});
}

// Rows [BH, N] of a [BH, T, N] tensor at token t, contiguous.
Tensor at_token(const Tensor& x, int64_t t) { return dense(x.narrow(1, t, 1)).view({x.size(0), x.size(2)}); }

// S [BH, Dk, Dv] *= e^gate, a value per head.
void decay_state(Tensor& s, const Tensor& log_decay) {
  Tensor e = empty_f32({s.size(0)});
  unary(Unary::exp, f(log_decay), f(e), s.size(0));
  binary(Binary::mul, f(s), f(e), Broadcast::per_row, f(s), s.size(0), s.size(1) * s.size(2));
}

// The recurrent form: per token, S = e^g S; delta = beta (v - k S); S += k^T delta; o = q S.
void recurrent(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g, const Tensor& beta, Tensor& s,
               Tensor& o) {
  const int64_t bh = q.size(0), tokens = q.size(1), dk = q.size(2), dv = v.size(2);
  for (int64_t t = 0; t < tokens; ++t) {
    const Tensor qt = at_token(q, t), kt = at_token(k, t), vt = at_token(v, t);
    const Tensor gt = dense(g.narrow(1, t, 1)), bt = dense(beta.narrow(1, t, 1));
    decay_state(s, gt);
    Tensor mem = empty_f32({bh, dv}), delta = empty_f32({bh, dv}), update = empty_f32({bh, dk, dv});
    gemm_nn(f(kt), f(s), f(mem), 1, dv, dk, bh);
    binary(Binary::sub, f(vt), f(mem), Broadcast::none, f(delta), bh, dv);
    binary(Binary::mul, f(delta), f(bt), Broadcast::per_row, f(delta), bh, dv);
    gemm_nn(f(kt), f(delta), f(update), dk, dv, 1, bh);
    binary(Binary::add, f(s), f(update), Broadcast::none, f(s), bh, dk * dv);
    Tensor ot = empty_f32({bh, dv});
    gemm_nn(f(qt), f(s), f(ot), 1, dv, dk, bh);
    Tensor slot = o.narrow(1, t, 1).view({bh, 1, dv});
    copy(ot.view({bh, 1, dv}), slot);
  }
}

// x [BH, T, D] zero-padded to [BH, Tp, D].
Tensor padded(const Tensor& x, int64_t tp) {
  Tensor out = empty_f32({x.size(0), tp, x.size(2)});
  fill(out, 0.0);
  Tensor head = out.narrow(1, 0, x.size(1));
  copy(x, head);
  return out;
}

// The chunked form (transformers' torch_chunk_gated_delta_rule).
void chunked(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& g_in, const Tensor& beta_in,
             int64_t c, Tensor& s, Tensor& o) {
  const int64_t bh = q_in.size(0), tokens = q_in.size(1), dk = q_in.size(2), dv = v_in.size(2);
  const int64_t n = (tokens + c - 1) / c, tp = n * c, blocks = bh * n;
  const Tensor q = padded(q_in, tp), k = padded(k_in, tp), v = padded(v_in, tp);
  const Tensor g = padded(g_in.view({bh, tokens, 1}), tp), beta = padded(beta_in.view({bh, tokens, 1}), tp);
  Tensor vb = empty_f32({bh, tp, dv}), kb = empty_f32({bh, tp, dk});
  binary(Binary::mul, f(v), f(beta), Broadcast::per_row, f(vb), bh * tp, dv);
  binary(Binary::mul, f(k), f(beta), Broadcast::per_row, f(kb), bh * tp, dk);
  // Cumulative decay per chunk: g [blocks, C] times the upper-triangular ones.
  Tensor ones = empty_f32({c, c}), cum = empty_f32({blocks, c});
  for (int64_t i = 0; i < c; ++i)
    for (int64_t j = 0; j < c; ++j) f(ones)[i * c + j] = i <= j ? 1.0f : 0.0f;
  gemm_nn(f(g), f(ones), f(cum), blocks, c, c);
  // Pairwise decays e^(cum_i - cum_j), zero above the diagonal.
  Tensor decay = empty_f32({blocks, c, c}), mask = empty_f32({c, c});
  for (int64_t i = 0; i < c; ++i)
    for (int64_t j = 0; j < c; ++j) f(mask)[i * c + j] = j <= i ? 0.0f : -std::numeric_limits<float>::infinity();
  fill(decay, 0.0);
  binary(Binary::add, f(decay), f(cum), Broadcast::per_row, f(decay), blocks * c, c);
  for (int64_t blk = 0; blk < blocks; ++blk) {
    float* d = f(decay) + blk * c * c;
    binary(Binary::sub, d, f(cum) + blk * c, Broadcast::per_col, d, c, c);
    binary(Binary::add, d, f(mask), Broadcast::none, d, c, c);
  }
  unary(Unary::exp, f(decay), f(decay), blocks * c * c);
  Tensor a = empty_f32({blocks, c, c}), p = empty_f32({blocks, c, c});
  gemm_nt(f(kb), f(k), f(a), c, c, dk, blocks);
  binary(Binary::mul, f(a), f(decay), Broadcast::none, f(a), 1, blocks * c * c);
  gemm_nt(f(q), f(k), f(p), c, c, dk, blocks);
  binary(Binary::mul, f(p), f(decay), Broadcast::none, f(p), 1, blocks * c * c);
  Tensor ecum = empty_f32({blocks * c});
  unary(Unary::exp, f(cum), f(ecum), blocks * c);
  Tensor kbd = empty_f32({bh, tp, dk}), qd = empty_f32({bh, tp, dk});
  binary(Binary::mul, f(kb), f(ecum), Broadcast::per_row, f(kbd), bh * tp, dk);
  binary(Binary::mul, f(q), f(ecum), Broadcast::per_row, f(qd), bh * tp, dk);
  // The UT transform's inverse: L = -strictly_lower(A); row i += row i's L times L's first i rows; then + I.
  for (int64_t blk = 0; blk < blocks; ++blk)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t j = 0; j < c; ++j) f(a)[(blk * c + i) * c + j] = j < i ? -f(a)[(blk * c + i) * c + j] : 0.0f;
  for (int64_t i = 1; i < c; ++i) {
    const Tensor row = dense(a.narrow(1, i, 1).narrow(2, 0, i)), sub = dense(a.narrow(1, 0, i).narrow(2, 0, i));
    Tensor add_on = empty_f32({blocks, 1, i});
    gemm_nn(f(row), f(sub), f(add_on), 1, i, i, blocks);
    binary(Binary::add, f(row), f(add_on), Broadcast::none, f(add_on), blocks, i);
    Tensor slot = a.narrow(1, i, 1).narrow(2, 0, i);
    copy(add_on, slot);
  }
  for (int64_t blk = 0; blk < blocks; ++blk)
    for (int64_t i = 0; i < c; ++i) f(a)[(blk * c + i) * c + i] = 1.0f;
  Tensor u = empty_f32({bh, tp, dv}), w = empty_f32({bh, tp, dk});
  gemm_nn(f(a), f(vb), f(u), c, dv, c, blocks);
  gemm_nn(f(a), f(kbd), f(w), c, dk, c, blocks);
  // e^(cum_last - cum) and e^cum_last per chunk.
  Tensor tail = empty_f32({blocks, c}), last = empty_f32({blocks});
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const float end = f(cum)[blk * c + c - 1];
    affine(f(cum) + blk * c, -1.0f, end, f(tail) + blk * c, c);
    f(last)[blk] = end;
  }
  unary(Unary::exp, f(tail), f(tail), blocks * c);
  unary(Unary::exp, f(last), f(last), blocks);
  Tensor kd = empty_f32({bh, tp, dk});
  binary(Binary::mul, f(k), f(tail), Broadcast::per_row, f(kd), bh * tp, dk);
  Tensor op = empty_f32({bh, tp, dv});
  for (int64_t i = 0; i < n; ++i) {
    const auto chunk = [&](const Tensor& x) { return dense(x.narrow(1, i * c, c)); };
    const Tensor wi = chunk(w), qi = chunk(qd), ui = chunk(u), kdi = chunk(kd);
    const Tensor pi = dense(p.view({bh, n, c, c}).narrow(1, i, 1)).view({bh, c, c});
    Tensor ws = empty_f32({bh, c, dv}), vnew = empty_f32({bh, c, dv}), inter = empty_f32({bh, c, dv});
    Tensor intra = empty_f32({bh, c, dv});
    gemm_nn(f(wi), f(s), f(ws), c, dv, dk, bh);
    binary(Binary::sub, f(ui), f(ws), Broadcast::none, f(vnew), 1, bh * c * dv);
    gemm_nn(f(qi), f(s), f(inter), c, dv, dk, bh);
    gemm_nn(f(pi), f(vnew), f(intra), c, dv, c, bh);
    Tensor slot = op.narrow(1, i * c, c);
    binary(Binary::add, f(inter), f(intra), Broadcast::none, f(inter), 1, bh * c * dv);
    copy(inter, slot);
    const Tensor decay_i = dense(last.view({bh, n}).narrow(1, i, 1));
    Tensor e = empty_f32({bh});
    copy(decay_i.view({bh}), e);
    binary(Binary::mul, f(s), f(e), Broadcast::per_row, f(s), bh, dk * dv);
    const Tensor kdt = dense(kdi.permute({0, 2, 1}));
    Tensor update = empty_f32({bh, dk, dv});
    gemm_nn(f(kdt), f(vnew), f(update), dk, dv, c, bh);
    binary(Binary::add, f(s), f(update), Broadcast::none, f(s), 1, bh * dk * dv);
  }
  Tensor head = op.narrow(1, 0, tokens);
  copy(head, o);
}

bool gated_delta_rule_covers(const GatedDeltaRuleArgs& a) {
  return computes(a.q.dtype()) && computes(a.g.dtype()) && computes(a.beta.dtype()) &&
         (a.state == nullptr || computes(a.state->dtype()));
}

void gated_delta_rule(const GatedDeltaRuleArgs& a) {
  const int64_t b = a.q.size(0), t = a.q.size(1), dk = a.q.size(3), hv = a.v.size(2), dv = a.v.size(3);
  const int64_t bh = b * hv;
  Tensor g, beta;
  gates(a, g, beta);
  const Tensor q = heads_first(a.q, hv, a.qk_l2norm, static_cast<float>(a.scale));
  const Tensor k = heads_first(a.k, hv, a.qk_l2norm, 1.0f);
  const Tensor v = dense(a.v.permute({0, 2, 1, 3})).view({bh, t, dv});
  const Tensor gh = gates_first(g, b, t, hv), betah = gates_first(beta, b, t, hv);
  Tensor s = empty_f32({bh, dk, dv});
  if (a.state != nullptr) copy(to_f32(*a.state).view({bh, dk, dv}), s);
  else fill(s, 0.0);
  Tensor o = empty_f32({bh, t, dv});
  if (t > 0) {
    const Tensor q3 = q.view({bh, t, dk}), k3 = k.view({bh, t, dk});
    // auto: transformers' choice, token by token for one token and in chunks for a prompt.
    const bool step = a.mode == GatedDeltaMode::recurrent || (a.mode == GatedDeltaMode::auto_ && t == 1);
    if (step) recurrent(q3, k3, v, gh, betah, s, o);
    else chunked(q3, k3, v, gh, betah, std::min(a.chunk_size, t), s, o);
  }
  const Tensor o4 = dense(o.view({b, hv, t, dv}).permute({0, 2, 1, 3}));
  from_f32(o4, a.out);
  if (a.state != nullptr) from_f32(s.view({b, hv, dk, dv}), *a.state);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(gated_delta_rule) { t.gated_delta_rule = entry(&gated_delta_rule, &gated_delta_rule_covers); }

}  // namespace fourfold::generic
