// Reference gelu: the exact erf form or the tanh approximation, in float64, one rounding on store.
#include <cmath>
#include <numbers>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {

// Both forms as torch.nn.functional.gelu writes them; like PyTorch, gelu(-inf) is -inf * 0 = NaN.
void gelu(const GeluArgs& args) {
  const double inv_sqrt2 = 1.0 / std::numbers::sqrt2;
  const double sqrt_2_over_pi = std::sqrt(2.0 / std::numbers::pi);
  const bool tanh_form = args.approximate == GeluApproximate::tanh;
  for_each_index(args.x.shape(), [&](const int64_t* index) {
    const double x = get(args.x, index);
    const double cdf = tanh_form ? 0.5 * (1.0 + std::tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)))
                                 : 0.5 * (1.0 + std::erf(x * inv_sqrt2));
    put(args.out, index, x * cdf);
  });
}

}  // namespace fourfold::ref
