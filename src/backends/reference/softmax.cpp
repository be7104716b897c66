// Reference softmax and log_softmax (and their backward): each row along `dim` in float64.
#include <cmath>
#include <limits>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {
namespace {

// Calls fn(index) once per row: index has every dim set except `dim`, which the callee walks.
template <class Fn>
void for_each_row_along(const Shape& shape, int dim, Fn&& fn) {
  Shape outer = shape;
  outer[dim] = 1;
  for_each_index(outer, [&](const int64_t* idx) {
    Index index(idx, idx + shape.size());
    fn(index);
  });
}

void softmax_rows(const SoftmaxArgs& a, bool log) {
  const int64_t n = a.x.size(a.dim);
  for_each_row_along(a.x.shape(), a.dim, [&](Index& index) {
    double max = -std::numeric_limits<double>::infinity();
    bool has_nan = false;
    for (int64_t j = 0; j < n; ++j) {
      index[a.dim] = j;
      const double v = get(a.x, index);
      has_nan |= std::isnan(v);
      max = std::fmax(max, v);
    }
    // All -inf: exp(-inf - -inf) is NaN, the same 0/0 PyTorch produces.
    const double shift = max;
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      index[a.dim] = j;
      sum += std::exp(get(a.x, index) - shift);
    }
    const double log_sum = std::log(sum);
    for (int64_t j = 0; j < n; ++j) {
      index[a.dim] = j;
      const double v = get(a.x, index) - shift;
      double r = log ? v - log_sum : std::exp(v) / sum;
      if (has_nan) r = std::numeric_limits<double>::quiet_NaN();
      put(a.out, index, r);
    }
  });
}

}  // namespace

void softmax(const SoftmaxArgs& args) { softmax_rows(args, false); }
void log_softmax(const SoftmaxArgs& args) { softmax_rows(args, true); }

// d softmax: grad_in = y * (g - sum(g * y))
void softmax_backward(const SoftmaxBackwardArgs& a) {
  const int64_t n = a.out.size(a.dim);
  for_each_row_along(a.out.shape(), a.dim, [&](Index& index) {
    double dot = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      index[a.dim] = j;
      dot += get(a.grad_out, index) * get(a.out, index);
    }
    for (int64_t j = 0; j < n; ++j) {
      index[a.dim] = j;
      put(a.grad_in, index, get(a.out, index) * (get(a.grad_out, index) - dot));
    }
  });
}

// d log_softmax: grad_in = g - exp(y) * sum(g)
void log_softmax_backward(const SoftmaxBackwardArgs& a) {
  const int64_t n = a.out.size(a.dim);
  for_each_row_along(a.out.shape(), a.dim, [&](Index& index) {
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      index[a.dim] = j;
      sum += get(a.grad_out, index);
    }
    for (int64_t j = 0; j < n; ++j) {
      index[a.dim] = j;
      put(a.grad_in, index, get(a.grad_out, index) - std::exp(get(a.out, index)) * sum);
    }
  });
}

}  // namespace fourfold::ref
