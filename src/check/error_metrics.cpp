#include "check/error_metrics.h"

#include "fourfold/errors.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace fourfold {
namespace {

// Position of a value in the ordered list of its format's values: sign-magnitude bits mapped to a line.
int64_t ordered_position(double v, DType dtype) {
  uint8_t buf[8] = {};
  store_from_double(dtype, buf, v);
  const size_t n = dtype_size(dtype);
  uint64_t bits = 0;
  std::memcpy(&bits, buf, n);
  const uint64_t sign = uint64_t{1} << (8 * n - 1);
  const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude : magnitude;
}

}  // namespace

int64_t ulp_distance(double a, double b, DType dtype) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : std::numeric_limits<int64_t>::max();
  if (is_integral(dtype)) return static_cast<int64_t>(std::fabs(a - b));
  const DType d = dtype == DType::complex64 ? DType::f32 : dtype;
  return std::llabs(ordered_position(a, d) - ordered_position(b, d));
}

ErrorStats compare_to_reference(const Tensor& actual, const Tensor& reference, double rel_floor) {
  ErrorStats s;
  std::vector<double> a, r;
  if (is_complex(actual.dtype()) || is_complex(reference.dtype())) {
    for (auto c : actual.to_complex_vector()) { a.push_back(c.real()); a.push_back(c.imag()); }
    for (auto c : reference.to_complex_vector()) { r.push_back(c.real()); r.push_back(c.imag()); }
  } else {
    a = actual.to_vector();
    r = reference.to_vector();
  }
  s.count = static_cast<int64_t>(a.size());
  for (double v : r)
    if (std::isfinite(v)) s.peak = std::fmax(s.peak, std::fabs(v));
  s.rel_floor = rel_floor >= 0 ? rel_floor : 1e-3 * s.peak;
  const double floor = s.rel_floor > 0 ? s.rel_floor : std::numeric_limits<double>::min();
  double sq = 0.0;
  s.exact = true;
  const DType out = actual.dtype();
  for (size_t i = 0; i < a.size() && i < r.size(); ++i) {
    // The reference rounded once to the output dtype: what a perfect kernel of that dtype returns.
    uint8_t buf[8];
    store_from_double(out == DType::complex64 ? DType::f32 : out, buf, r[i]);
    const double r_rounded = load_as_double(out == DType::complex64 ? DType::f32 : out, buf);
    const bool an = std::isnan(a[i]), rn = std::isnan(r[i]);
    if (an || rn) {
      if (an != rn) {
        ++s.nan_mismatches;
        s.exact = false;
      }
      continue;
    }
    if (a[i] != r_rounded) s.exact = false;
    if (std::isinf(a[i]) || std::isinf(r[i])) {
      if (a[i] != r[i]) {
        s.max_abs = s.max_rel = std::numeric_limits<double>::infinity();
        sq = std::numeric_limits<double>::infinity();
      }
      continue;
    }
    const double err = std::fabs(a[i] - r[i]);
    s.max_abs = std::fmax(s.max_abs, err);
    s.max_rel = std::fmax(s.max_rel, err / std::fmax(std::fabs(r[i]), floor));
    s.max_ulp = std::max(s.max_ulp, ulp_distance(a[i], r_rounded, out));
    sq += err * err;
  }
  const double mse = a.empty() ? 0.0 : sq / static_cast<double>(a.size());
  if (s.nan_mismatches > 0) s.psnr_db = std::numeric_limits<double>::quiet_NaN();
  else if (mse == 0.0) s.psnr_db = std::numeric_limits<double>::infinity();
  else if (s.peak == 0.0) s.psnr_db = -std::numeric_limits<double>::infinity();
  else s.psnr_db = 10.0 * std::log10(s.peak * s.peak / mse);
  return s;
}

namespace {

struct LogitRows {
  int64_t rows = 0, vocab = 0;
  std::vector<double> ref, cand;
};

LogitRows logit_rows(const Tensor& reference, const Tensor& candidate, const char* where) {
  if (reference.dim() != 2 || reference.shape() != candidate.shape())
    fail<ShapeError>(where, "logits", "two [positions, vocab] tensors of one shape",
                     shape_string(reference.shape()) + " and " + shape_string(candidate.shape()));
  return {reference.size(0), reference.size(1), reference.to_vector(), candidate.to_vector()};
}

double log_sum_exp(const double* x, int64_t n) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) m = std::fmax(m, x[i]);
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - m);
  return m + std::log(s);
}

int64_t first_argmax(const double* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

}  // namespace

double mean_kl_divergence(const Tensor& reference_logits, const Tensor& candidate_logits) {
  const LogitRows l = logit_rows(reference_logits, candidate_logits, "mean_kl_divergence");
  if (l.rows == 0) return 0.0;
  double total = 0.0;
  for (int64_t r = 0; r < l.rows; ++r) {
    const double* p = l.ref.data() + r * l.vocab;
    const double* q = l.cand.data() + r * l.vocab;
    const double lp = log_sum_exp(p, l.vocab), lq = log_sum_exp(q, l.vocab);
    double kl = 0.0;
    for (int64_t i = 0; i < l.vocab; ++i) {
      const double log_p = p[i] - lp;
      if (std::isinf(log_p) && log_p < 0) continue;   // p_i = 0 contributes nothing
      kl += std::exp(log_p) * (log_p - (q[i] - lq));
    }
    total += kl;
  }
  return total / static_cast<double>(l.rows);
}

double top1_agreement_percent(const Tensor& reference_logits, const Tensor& candidate_logits) {
  const LogitRows l = logit_rows(reference_logits, candidate_logits, "top1_agreement_percent");
  if (l.rows == 0) return 100.0;
  int64_t agree = 0;
  for (int64_t r = 0; r < l.rows; ++r)
    agree += first_argmax(l.ref.data() + r * l.vocab, l.vocab) == first_argmax(l.cand.data() + r * l.vocab, l.vocab);
  return 100.0 * static_cast<double>(agree) / static_cast<double>(l.rows);
}

}  // namespace fourfold
