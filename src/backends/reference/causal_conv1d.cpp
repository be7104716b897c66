// Reference causal_conv1d: each channel's window summed in float64, silu in float64, one rounding on store.
#include <cmath>
#include <vector>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void causal_conv1d(const CausalConv1dArgs& a) {
  const int64_t batch = a.x.size(0), channels = a.x.size(1), t = a.x.size(2), k = a.weight.size(1);
  std::vector<double> window(static_cast<size_t>(k - 1 + t));   // the state's K-1 columns, then x
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t j = 0; j < k - 1; ++j) window[j] = a.state != nullptr ? at(*a.state, b, c, j) : 0.0;
      for (int64_t i = 0; i < t; ++i) window[k - 1 + i] = at(a.x, b, c, i);
      for (int64_t i = 0; i < t; ++i) {
        double sum = a.bias != nullptr ? at(*a.bias, c) : 0.0;
        for (int64_t j = 0; j < k; ++j) sum += at(a.weight, c, j) * window[i + j];
        if (a.silu) sum = sum / (1.0 + std::exp(-sum));
        const int64_t idx[3] = {b, c, i};
        put(a.out, idx, sum);
      }
      if (a.state == nullptr) continue;
      for (int64_t j = 0; j < k - 1; ++j) {
        const int64_t idx[3] = {b, c, j};
        put(*a.state, idx, window[t + j]);
      }
    }
}

}  // namespace fourfold::ref
