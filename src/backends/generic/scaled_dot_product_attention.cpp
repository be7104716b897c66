// Generic scaled dot-product attention, as a graph lowering composes it: K and V repeated over the q heads of a
// group (materialized), the [L, S] scores of every head materialized by one
// batched GEMM, then a scale pass, the mask (bool masks as log(mask): 0 or -inf) or causal bias added, the
// softmax passes, and a second batched GEMM with V.
#include <cmath>
#include <limits>

#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// t [B, Hk, S, D] repeated to [B, Hk * group, S, D] (q head h reads KV head h / group), as a contiguous f32 copy.
Tensor repeat_heads(const Tensor& t, int64_t group) {
  const int64_t b = t.size(0), hk = t.size(1), s = t.size(2), d = t.size(3);
  if (group == 1) return to_f32(t);
  return to_f32(t.unsqueeze(2).expand({b, hk, group, s, d})).view({b, hk * group, s, d});
}

// The additive causal bias [L, S]: 0 where query i may attend key j, -inf elsewhere.
Tensor causal_bias(CausalMode mode, int64_t l, int64_t s) {
  Tensor bias = empty_f32({l, s});
  float* p = bias.data_as<float>();
  const int64_t shift = mode == CausalMode::lower_right ? s - l : 0;
  for (int64_t i = 0; i < l; ++i)
    for (int64_t j = 0; j < s; ++j) p[i * s + j] = j <= i + shift ? 0.0f : -kInf;
  return bias;
}

bool attention_covers(const AttentionArgs& a) { return computes(a.q.dtype()); }

void scaled_dot_product_attention(const AttentionArgs& a) {
  const int64_t batch = a.q.size(0), hq = a.q.size(1), l = a.q.size(2), e = a.q.size(3);
  const int64_t s = a.k.size(2), ev = a.v.size(3);
  const int64_t heads = batch * hq;
  if (heads == 0 || l == 0 || ev == 0) return;
  if (s == 0) {   // no key for any query: zeros, as a fully masked row
    fill(a.out, 0.0);
    return;
  }
  const Tensor q = to_f32(a.q);
  const Tensor k = repeat_heads(a.k, a.group);
  const Tensor v = repeat_heads(a.v, a.group);

  Tensor scores = empty_f32({heads, l, s});
  gemm_nt(q.data_as<float>(), k.data_as<float>(), scores.data_as<float>(), l, s, e, heads);
  // PyTorch scales q and k before the product, so E = 0 gives zero scores whatever the scale.
  Tensor scaled = empty_f32({heads, l, s});
  affine(scores.data_as<float>(), e == 0 ? 0.0f : static_cast<float>(a.scale), 0.0f, scaled.data_as<float>(),
         heads * l * s);

  const int64_t rows = heads * l;
  Tensor biased = scaled;
  if (a.mask != nullptr || a.causal != CausalMode::none) {
    Tensor bias;
    if (a.mask == nullptr) {
      bias = causal_bias(a.causal, l, s).unsqueeze(0).expand({heads, l, s});
    } else {
      bias = to_f32(*a.mask);   // bool gives 1 / 0
      if (a.mask->dtype() == DType::boolean)
        unary(Unary::log, bias.data_as<float>(), bias.data_as<float>(), rows * s);
    }
    const Tensor full = to_f32(bias);   // the causal bias broadcast over heads is materialized here
    biased = empty_f32({heads, l, s});
    binary(Binary::add, scaled.data_as<float>(), full.data_as<float>(), Broadcast::none, biased.data_as<float>(), rows,
           s);
  }

  // The softmax passes. A row with nothing to attend (max -inf) gets max 0 and sum 1, so that its weights come
  // out 0 rather than 0/0 (PyTorch's _safe_softmax); NaN still propagates through exp and the sum.
  Tensor max = empty_f32({rows}), shifted = empty_f32({rows, s}), ex = empty_f32({rows, s}), sum = empty_f32({rows});
  row_reduce(Reduce::max, biased.data_as<float>(), rows, s, max.data_as<float>());
  float* m = max.data_as<float>();
  for (int64_t r = 0; r < rows; ++r)
    if (m[r] == -kInf) m[r] = 0.0f;
  binary(Binary::sub, biased.data_as<float>(), m, Broadcast::per_row, shifted.data_as<float>(), rows, s);
  unary(Unary::exp, shifted.data_as<float>(), ex.data_as<float>(), rows * s);
  row_reduce(Reduce::sum, ex.data_as<float>(), rows, s, sum.data_as<float>());
  float* z = sum.data_as<float>();
  for (int64_t r = 0; r < rows; ++r)
    if (z[r] == 0.0f) z[r] = 1.0f;
  Tensor weights = empty_f32({heads, l, s});
  binary(Binary::div, ex.data_as<float>(), z, Broadcast::per_row, weights.data_as<float>(), rows, s);

  Tensor out = empty_f32({batch, hq, l, ev});
  gemm_nn(weights.data_as<float>(), v.data_as<float>(), out.data_as<float>(), l, ev, s, heads);
  from_f32(out, a.out);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(scaled_dot_product_attention) {
  t.scaled_dot_product_attention = entry(&scaled_dot_product_attention, &attention_covers);
}

}  // namespace fourfold::generic
