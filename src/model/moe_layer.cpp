// moe_block_fallback: route on the host (T * k small integers), run each active expert on its rows.
#include "model/moe_layer.h"

#include <vector>

#include "fourfold/errors.h"
#include "model/projection.h"

namespace fourfold::model {
namespace {

Projection expert(const Tensor& stacked, const OptTensor& scales, int64_t e) {
  Projection p;
  p.weight = stacked.select(0, e);
  if (scales) p.scale = scales->select(0, e);
  return p;
}

}  // namespace

Tensor moe_block_fallback(const Tensor& x, const Tensor& router_weight, const MoeExpertWeights& w, int64_t top_k,
                          bool norm_topk_prob) {
  const int64_t tokens = x.size(0), hidden = x.size(1), experts = router_weight.size(0);
  if (top_k < 1 || top_k > experts)
    fail<ValueError>("moe_block", "top_k", "in [1, number of experts]", std::to_string(top_k));
  const Tensor logits = linear(x, router_weight).to(DType::f32);
  Tensor weights, indices;
  if (norm_topk_prob) {
    // p_i / sum_topk p_j = exp(l_i) / sum_topk exp(l_j): the softmax of the k largest logits.
    auto [values, idx] = topk(logits, top_k, -1);
    weights = softmax(values, -1);
    indices = idx;
  } else {
    auto [values, idx] = topk(softmax(logits, -1), top_k, -1);
    weights = values;
    indices = idx;
  }
  const std::vector<double> wv = weights.to_vector(), iv = indices.to_vector();

  // Stable counting sort of the (token, slot) pairs by expert: each expert's rows become one contiguous block.
  const int64_t pairs = tokens * top_k;
  std::vector<int64_t> count(experts + 1, 0);
  for (double e : iv) ++count[static_cast<int64_t>(e) + 1];
  for (int64_t e = 0; e < experts; ++e) count[e + 1] += count[e];
  std::vector<int64_t> begin(count.begin(), count.end() - 1);
  std::vector<int64_t> source_token(pairs), slot_of_pair(pairs);
  std::vector<double> sorted_weight(pairs);
  for (int64_t p = 0; p < pairs; ++p) {
    const int64_t row = begin[static_cast<int64_t>(iv[p])]++;
    source_token[row] = p / top_k;
    sorted_weight[row] = wv[p];
    slot_of_pair[p] = row;   // pair p (token-major) sits at `row` of the sorted order
  }
  // embedding is a row gather: it builds the expert-sorted copy of x and, later, puts the rows back.
  const Tensor xs = embedding(x, Tensor::from_values(source_token, {pairs}, DType::i64));
  Tensor ys = Tensor::empty({pairs, hidden}, x.dtype());
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t rows = count[e + 1] - count[e];
    if (rows == 0) continue;
    const Tensor xe = xs.narrow(0, count[e], rows);
    const Tensor h = mul(silu(project(xe, expert(w.gate, w.gate_scale, e))), project(xe, expert(w.up, w.up_scale, e)));
    ys.narrow(0, count[e], rows).copy_from(project(h, expert(w.down, w.down_scale, e)));
  }
  ys = mul(ys, Tensor::from_values(sorted_weight, {pairs, 1}, x.dtype()));
  const Tensor back = embedding(ys, Tensor::from_values(slot_of_pair, {pairs}, DType::i64)).view({tokens, top_k, hidden});
  Tensor out = back.select(1, 0).contiguous();
  for (int64_t j = 1; j < top_k; ++j) out = add(out, back.select(1, j));
  return out;
}

}  // namespace fourfold::model
