// Reference rms_norm and its backward: each row of [R, D] in float64.
#include <cmath>
#include <vector>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {
namespace {

// 1 / sqrt(mean(x^2) + eps) of row r.
double inverse_rms(const Tensor& x, int64_t r, double eps) {
  const int64_t d = x.size(1);
  double sum_sq = 0.0;
  for (int64_t j = 0; j < d; ++j) {
    const double v = at(x, r, j);
    sum_sq += v * v;
  }
  return 1.0 / std::sqrt(sum_sq / static_cast<double>(d) + eps);
}

}  // namespace

// With a residual (add_rms_norm), h = x + residual is stored to sum_out first, rounded to its dtype, and the
// row normalized is that stored h: the value PyTorch's rms_norm(x + residual) sees.
void rms_norm(const RmsNormArgs& a) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  if (d == 0) return;
  const Tensor& h = a.residual != nullptr ? *a.sum_out : a.x;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < d && a.residual != nullptr; ++j) {
      const int64_t idx[2] = {r, j};
      put(h, idx, at(a.x, r, j) + at(*a.residual, r, j));
    }
    const double inv = inverse_rms(h, r, a.eps);
    for (int64_t j = 0; j < d; ++j) {
      const double w = a.weight != nullptr ? at(*a.weight, j) : 1.0;
      const int64_t idx[2] = {r, j};
      put(a.out, idx, at(h, r, j) * inv * w);
    }
  }
}

// y = x * inv * w with inv = (mean(x^2) + eps)^(-1/2), so d inv / d x_k = -inv^3 x_k / D and
//   grad_x_k = inv * g_k w_k - inv^3 x_k / D * sum_j g_j w_j x_j,   grad_w_j = sum_rows g_j x_j inv.
void rms_norm_backward(const RmsNormBackwardArgs& a) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  std::vector<double> grad_w(static_cast<size_t>(d), 0.0);
  for (int64_t r = 0; r < rows && d > 0; ++r) {
    const double inv = inverse_rms(a.x, r, a.eps);
    double gwx = 0.0;
    for (int64_t j = 0; j < d; ++j) {
      const double w = a.weight != nullptr ? at(*a.weight, j) : 1.0;
      gwx += at(a.grad_out, r, j) * w * at(a.x, r, j);
    }
    for (int64_t j = 0; j < d; ++j) {
      const double w = a.weight != nullptr ? at(*a.weight, j) : 1.0;
      const double g = at(a.grad_out, r, j), x = at(a.x, r, j);
      const int64_t idx[2] = {r, j};
      put(a.grad_x, idx, inv * g * w - inv * inv * inv * x / static_cast<double>(d) * gwx);
      grad_w[j] += g * x * inv;
    }
  }
  if (a.grad_weight != nullptr)
    for (int64_t j = 0; j < d; ++j) put(*a.grad_weight, &j, grad_w[j]);
}

}  // namespace fourfold::ref
