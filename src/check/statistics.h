// Order statistics and means of timing samples: the few summaries every record reports.
#pragma once

#include <cstddef>
#include <vector>

namespace fourfold {

// All functions take the samples by value or reference and never modify the caller's vector. An empty
// sample or a NaN in it is a ValueError (a NaN has no place in an order, and a silent one would move every
// percentile). Infinities are ordered like numbers.

// Percentile p in [0, 100] by linear interpolation between closest ranks: the sorted samples x[0..n-1]
// sit at ranks 0..n-1, the wanted rank is h = p/100 * (n-1), and the result is
// x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] - x[floor(h)]). This is numpy.percentile's default
// (method="linear"), Excel's PERCENTILE.INC and R's type 7.
double percentile(std::vector<double> samples, double p);
double median(std::vector<double> samples);     // percentile 50: the mean of the two middle values when n is even
double min_of(const std::vector<double>& samples);
double max_of(const std::vector<double>& samples);
double mean_of(const std::vector<double>& samples);
// exp(mean(log x)); every value must be > 0 (ValueError otherwise). Computed in logs, so a long product of
// large or small ratios neither overflows nor underflows.
double geometric_mean(const std::vector<double>& values);

struct Summary {
  size_t count = 0;
  double median = 0.0, p10 = 0.0, p90 = 0.0, min = 0.0, max = 0.0;
};
Summary summarize(const std::vector<double>& samples);   // one sort for all five figures

}  // namespace fourfold
