// Reference moe_experts: float64 loops per row; fp8 weights times their 128x128 block scale element by element, FP4
// ones times their block and global scales.
#include <cmath>
#include <vector>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"
#include "core/fp4_blocks.h"

namespace fourfold::ref {
namespace {

// Element (e, o, i) of an expert weight [E, out, in], dequantized when a block scale is given (FP4: [E, out, in/2]
// codes, its block scale and global scale).
double weight_at(const Tensor& w, const Tensor* scale, const Tensor* global, int64_t e, int64_t o, int64_t i) {
  if (is_fp4(w.dtype())) return fp4_weight_at(w, *scale, fp4_global_value(global, e), e, o, i);
  const double v = at(w, e, o, i);
  return scale == nullptr ? v : v * at(*scale, e, o / 128, i / 128);
}

}  // namespace

void moe_experts(const MoeExpertsArgs& a) {
  const int64_t tokens = a.x.size(0), hidden = a.x.size(1), inter = a.gate.size(1), experts = a.gate.size(0);
  std::vector<double> acc(static_cast<size_t>(tokens * hidden), 0.0), h(static_cast<size_t>(inter));
  int64_t start = 0;
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t end = static_cast<int64_t>(at(a.offs, e));
    for (int64_t r = start; r < end; ++r) {
      const int64_t t = static_cast<int64_t>(at(a.token_of_row, r));
      for (int64_t i = 0; i < inter; ++i) {
        double g = 0.0, u = 0.0;
        for (int64_t k = 0; k < hidden; ++k) {
          const double xv = at(a.x, t, k);
          g += xv * weight_at(a.gate, a.gate_scale, a.gate_global, e, i, k);
          u += xv * weight_at(a.up, a.up_scale, a.up_global, e, i, k);
        }
        h[static_cast<size_t>(i)] = g / (1.0 + std::exp(-g)) * u;
      }
      const double weight = at(a.row_weight, r);
      for (int64_t o = 0; o < hidden; ++o) {
        double y = 0.0;
        for (int64_t i = 0; i < inter; ++i) y += h[static_cast<size_t>(i)] * weight_at(a.down, a.down_scale, a.down_global, e, o, i);
        acc[static_cast<size_t>(t * hidden + o)] += weight * y;
      }
    }
    start = end;
  }
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t o = 0; o < hidden; ++o) put(a.out, Index{t, o}, acc[static_cast<size_t>(t * hidden + o)]);
}

}  // namespace fourfold::ref
