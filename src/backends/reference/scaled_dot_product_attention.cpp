// Reference scaled dot-product attention and its backward: one query row at a time, in float64.
#include <cmath>
#include <limits>
#include <vector>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {
namespace {

double at4(const Tensor& t, int64_t a, int64_t b, int64_t c, int64_t d) {
  const int64_t idx[4] = {a, b, c, d};
  return get(t, idx);
}

void put4(const Tensor& t, int64_t a, int64_t b, int64_t c, int64_t d, double v) {
  const int64_t idx[4] = {a, b, c, d};
  put(t, idx, v);
}

bool causal_allows(CausalMode mode, int64_t i, int64_t j, int64_t l, int64_t s) {
  switch (mode) {
    case CausalMode::top_left: return j <= i;
    case CausalMode::lower_right: return j <= i + (s - l);
    case CausalMode::none: break;
  }
  return true;
}

// The attention weights of query row (b, h, i) over the S keys. A row whose scores are all -inf (nothing to
// attend) gets all-zero weights, as PyTorch's _safe_softmax; NaN and +inf still give NaN as a softmax does.
std::vector<double> row_weights(const AttentionArgs& a, int64_t b, int64_t h, int64_t i) {
  const int64_t l = a.q.size(2), e = a.q.size(3), s = a.k.size(2);
  const int64_t kvh = h / a.group;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  std::vector<double> w(s);
  bool all_masked = true;
  double max = neg_inf;
  for (int64_t j = 0; j < s; ++j) {
    double score = neg_inf;
    bool attends = causal_allows(a.causal, i, j, l, s);
    if (attends && a.mask != nullptr && a.mask->dtype() == DType::boolean) attends = at4(*a.mask, b, h, i, j) != 0.0;
    if (attends) {
      double dot = 0.0;
      for (int64_t c = 0; c < e; ++c) dot += at4(a.q, b, h, i, c) * at4(a.k, b, kvh, j, c);
      // PyTorch scales q and k before the product, so E = 0 gives a zero score even with scale = inf.
      score = e == 0 ? 0.0 : dot * a.scale;
      if (a.mask != nullptr && a.mask->dtype() != DType::boolean) score += at4(*a.mask, b, h, i, j);
    }
    w[j] = score;
    all_masked = all_masked && score == neg_inf;
    if (score > max) max = score;
  }
  if (all_masked) {
    for (double& x : w) x = 0.0;
    return w;
  }
  double sum = 0.0;
  for (double& x : w) {
    x = std::exp(x - max);
    sum += x;
  }
  for (double& x : w) x /= sum;
  return w;
}

}  // namespace

void scaled_dot_product_attention(const AttentionArgs& a) {
  const int64_t batch = a.q.size(0), hq = a.q.size(1), l = a.q.size(2);
  const int64_t s = a.k.size(2), ev = a.v.size(3);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < l; ++i) {
        const std::vector<double> w = row_weights(a, b, h, i);
        for (int64_t c = 0; c < ev; ++c) {
          double acc = 0.0;
          for (int64_t j = 0; j < s; ++j) acc += w[j] * at4(a.v, b, h / a.group, j, c);
          put4(a.out, b, h, i, c, acc);
        }
      }
}

// With P = softmax(S), S = scale * q k^T (+ mask), O = P v:
//   dv = P^T dO, dP = dO v^T, dS = P * (dP - rowsum(P * dP)), dq = scale * dS k, dk = scale * dS^T q,
// where dk and dv sum over the q heads that share a kv head.
void scaled_dot_product_attention_backward(const AttentionBackwardArgs& a) {
  const AttentionArgs& f = a.forward;
  const int64_t batch = f.q.size(0), hq = f.q.size(1), l = f.q.size(2), e = f.q.size(3);
  const int64_t hk = f.k.size(1), s = f.k.size(2), ev = f.v.size(3);
  // dk and dv gather from several rows and heads: accumulate unrounded, store once at the end.
  std::vector<double> dk(static_cast<size_t>(batch * hk * s * e), 0.0);
  std::vector<double> dv(static_cast<size_t>(batch * hk * s * ev), 0.0);
  auto dk_at = [&](int64_t b, int64_t h, int64_t j, int64_t c) -> double& { return dk[((b * hk + h) * s + j) * e + c]; };
  auto dv_at = [&](int64_t b, int64_t h, int64_t j, int64_t c) -> double& { return dv[((b * hk + h) * s + j) * ev + c]; };

  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kvh = h / f.group;
      for (int64_t i = 0; i < l; ++i) {
        const std::vector<double> p = row_weights(f, b, h, i);
        std::vector<double> dp(s, 0.0);
        double p_dot_dp = 0.0;
        for (int64_t j = 0; j < s; ++j) {
          for (int64_t c = 0; c < ev; ++c) {
            const double g = at4(a.grad_out, b, h, i, c);
            dp[j] += g * at4(f.v, b, kvh, j, c);
            dv_at(b, kvh, j, c) += p[j] * g;
          }
          p_dot_dp += p[j] * dp[j];
        }
        std::vector<double> ds(s);
        for (int64_t j = 0; j < s; ++j) ds[j] = p[j] * (dp[j] - p_dot_dp);
        for (int64_t c = 0; c < e; ++c) {
          double dq = 0.0;
          const double qc = at4(f.q, b, h, i, c);
          for (int64_t j = 0; j < s; ++j) {
            dq += ds[j] * at4(f.k, b, kvh, j, c);
            dk_at(b, kvh, j, c) += f.scale * ds[j] * qc;
          }
          put4(a.grad_q, b, h, i, c, f.scale * dq);
        }
      }
    }

  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hk; ++h)
      for (int64_t j = 0; j < s; ++j) {
        for (int64_t c = 0; c < e; ++c) put4(a.grad_k, b, h, j, c, dk_at(b, h, j, c));
        for (int64_t c = 0; c < ev; ++c) put4(a.grad_v, b, h, j, c, dv_at(b, h, j, c));
      }
}

}  // namespace fourfold::ref
