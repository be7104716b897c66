// Reference rotary position embedding: each pair rotated by its (cos, sin) in float64, the tail copied.
#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

void rotary_embedding(const RotaryArgs& a) {
  const int last = a.x.dim() - 1;
  const int64_t d = a.x.size(last), half = a.cos.size(last);
  Shape outer = a.x.shape();
  outer[last] = 1;
  for_each_index(outer, [&](const int64_t* idx) {
    Index xi(idx, idx + a.x.dim());
    Index ci = xi;
    for (int64_t i = 0; i < half; ++i) {
      ci[last] = i;
      const double c = get(a.cos, ci), s = get(a.sin, ci);
      const int64_t first = a.style == RotaryStyle::half_split ? i : 2 * i;
      const int64_t second = a.style == RotaryStyle::half_split ? i + half : 2 * i + 1;
      xi[last] = first;
      const double x0 = get(a.x, xi);
      xi[last] = second;
      const double x1 = get(a.x, xi);
      xi[last] = first;
      put(a.out, xi, x0 * c - x1 * s);
      xi[last] = second;
      put(a.out, xi, x1 * c + x0 * s);
    }
    for (int64_t j = 2 * half; j < d; ++j) {
      xi[last] = j;
      put(a.out, xi, get(a.x, xi));
    }
  });
}

}  // namespace fourfold::ref
