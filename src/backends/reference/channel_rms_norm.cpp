// Reference channel_rms_norm: each position's channels in float64; the fused silu reads the normalized value
// back from out, so it sees it rounded to out's dtype, as silu(channel_rms_norm(x)) would.
#include <cmath>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void channel_rms_norm(const ChannelNormArgs& a) {
  const int64_t n = a.x.size(0), c = a.x.size(1), positions = a.x.size(2);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t s = 0; s < positions; ++s) {
      double sum_sq = 0.0;
      for (int64_t ch = 0; ch < c; ++ch) {
        const double v = at(a.x, i, ch, s);
        sum_sq += v * v;
      }
      const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(c) + a.eps);
      for (int64_t ch = 0; ch < c; ++ch) {
        const int64_t idx[3] = {i, ch, s};
        put(a.out, idx, at(a.x, i, ch, s) * inv * (a.weight != nullptr ? at(*a.weight, ch) : 1.0));
        if (a.silu) {
          const double y = get(a.out, idx);
          put(a.out, idx, y / (1.0 + std::exp(-y)));
        }
      }
    }
}

}  // namespace fourfold::ref
