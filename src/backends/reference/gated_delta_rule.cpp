// Reference gated delta rule: token by token on a float64 state, whatever the mode (the chunked form is the same
// math in another order), the state rounded to its dtype once at the end and each output once on store.
#include <cmath>
#include <vector>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {
namespace {

double get4(const Tensor& t, int64_t a, int64_t b, int64_t c, int64_t d) {
  const int64_t idx[4] = {a, b, c, d};
  return get(t, idx);
}

// softplus(x) = log(1 + e^x), without overflow for large x.
double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// A head's q or k vector at token t, L2-normalized (x / sqrt(sum x^2 + 1e-6)) when asked, times `scale`.
std::vector<double> head_vector(const Tensor& x, int64_t b, int64_t t, int64_t h, bool l2norm, double scale) {
  const int64_t d = x.size(3);
  std::vector<double> out(static_cast<size_t>(d));
  double sum_sq = 0.0;
  for (int64_t i = 0; i < d; ++i) {
    out[i] = get4(x, b, t, h, i);
    sum_sq += out[i] * out[i];
  }
  const double norm = l2norm ? 1.0 / std::sqrt(sum_sq + 1e-6) : 1.0;
  for (double& v : out) v *= norm * scale;
  return out;
}

}  // namespace

void gated_delta_rule(const GatedDeltaRuleArgs& a) {
  const int64_t batch = a.q.size(0), tokens = a.q.size(1), hk = a.q.size(2), dk = a.q.size(3);
  const int64_t hv = a.v.size(2), dv = a.v.size(3), group = hv / hk;
  std::vector<double> s(static_cast<size_t>(dk * dv)), kv(static_cast<size_t>(dv));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hv; ++h) {
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j) s[i * dv + j] = a.state != nullptr ? get4(*a.state, b, h, i, j) : 0.0;
      for (int64_t t = 0; t < tokens; ++t) {
        const std::vector<double> q = head_vector(a.q, b, t, h / group, a.qk_l2norm, a.scale);
        const std::vector<double> k = head_vector(a.k, b, t, h / group, a.qk_l2norm, 1.0);
        const int64_t gi[3] = {b, t, h};
        double g = get(a.g, gi), beta = get(a.beta, gi);
        if (a.a_log != nullptr) {
          g = -std::exp(at(*a.a_log, h)) * softplus(g + at(*a.dt_bias, h));
          beta = 1.0 / (1.0 + std::exp(-beta));
        }
        const double decay = std::exp(g);
        for (double& x : s) x *= decay;
        for (int64_t j = 0; j < dv; ++j) {
          double mem = 0.0;
          for (int64_t i = 0; i < dk; ++i) mem += s[i * dv + j] * k[i];
          kv[j] = beta * (get4(a.v, b, t, h, j) - mem);
        }
        for (int64_t i = 0; i < dk; ++i)
          for (int64_t j = 0; j < dv; ++j) s[i * dv + j] += k[i] * kv[j];
        for (int64_t j = 0; j < dv; ++j) {
          double o = 0.0;
          for (int64_t i = 0; i < dk; ++i) o += s[i * dv + j] * q[i];
          const int64_t idx[4] = {b, t, h, j};
          put(a.out, idx, o);
        }
      }
      if (a.state == nullptr) continue;
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j) {
          const int64_t idx[4] = {b, h, i, j};
          put(*a.state, idx, s[i * dv + j]);
        }
    }
}

}  // namespace fourfold::ref
