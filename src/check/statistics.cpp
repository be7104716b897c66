#include "check/statistics.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "fourfold/errors.h"

namespace fourfold {
namespace {

void check_samples(const std::vector<double>& samples, const char* where) {
  if (samples.empty()) fail<ValueError>(where, "samples", "at least one value", "none");
  for (size_t i = 0; i < samples.size(); ++i)
    if (std::isnan(samples[i])) fail<ValueError>(where, "samples", "no NaN", fmt::format("NaN at index {}", i));
}

// Rank interpolation on an already sorted, checked vector.
double sorted_percentile(const std::vector<double>& sorted, double p) {
  const double h = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  const double frac = h - static_cast<double>(lo);
  // Written as a + frac * (b - a) like numpy; equal neighbours (inf included) return the value itself.
  if (sorted[lo] == sorted[lo + 1]) return sorted[lo];
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

}  // namespace

double percentile(std::vector<double> samples, double p) {
  check_samples(samples, "percentile");
  if (!(p >= 0.0 && p <= 100.0)) fail<ValueError>("percentile", "p", "a value in [0, 100]", fmt::format("{}", p));
  std::sort(samples.begin(), samples.end());
  return sorted_percentile(samples, p);
}

double median(std::vector<double> samples) {
  check_samples(samples, "median");
  std::sort(samples.begin(), samples.end());
  return sorted_percentile(samples, 50.0);
}

double min_of(const std::vector<double>& samples) {
  check_samples(samples, "min_of");
  return *std::min_element(samples.begin(), samples.end());
}

double max_of(const std::vector<double>& samples) {
  check_samples(samples, "max_of");
  return *std::max_element(samples.begin(), samples.end());
}

double mean_of(const std::vector<double>& samples) {
  check_samples(samples, "mean_of");
  double sum = 0.0;
  for (double v : samples) sum += v;
  return sum / static_cast<double>(samples.size());
}

double geometric_mean(const std::vector<double>& values) {
  check_samples(values, "geometric_mean");
  double log_sum = 0.0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!(values[i] > 0.0) || std::isinf(values[i]))
      fail<ValueError>("geometric_mean", "values", "finite values > 0",
                       fmt::format("{} at index {}", values[i], i));
    log_sum += std::log(values[i]);
  }
  return std::exp(log_sum / static_cast<double>(values.size()));
}

Summary summarize(const std::vector<double>& samples) {
  check_samples(samples, "summarize");
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  Summary s;
  s.count = sorted.size();
  s.median = sorted_percentile(sorted, 50.0);
  s.p10 = sorted_percentile(sorted, 10.0);
  s.p90 = sorted_percentile(sorted, 90.0);
  s.min = sorted.front();
  s.max = sorted.back();
  return s;
}

}  // namespace fourfold
