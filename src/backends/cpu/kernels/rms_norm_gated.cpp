// rms_norm_gated rows, compiled once per ISA: sum(x^2) in double lanes, then one pass that rounds where
// transformers rounds (the normed x to the row's type, its product with the weight to the product's type) and
// writes that times silu(gate), rounded once more.
#include "backends/cpu/kernels/rms_norm_gated.h"
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

template <RowType T>
void row(const RmsNormGatedRow& r, int64_t d, double eps) {
  const double sum = sum_of_squares<T>(r.x, d);
  const vf inv = splat(static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(d) + eps)));
  const auto value = [&](int64_t at, int64_t count) {
    const bool full = count == kLanes;
    vf y = rounded<T>((full ? load<T>(r.x, at) : load_tail<T>(r.x, at, count, 0.0f)) * inv);
    if (r.weight != nullptr) {
      if (r.weight_f32) y *= full ? load<RowType::f32>(r.weight, at) : load_tail<RowType::f32>(r.weight, at, count, 0.0f);
      else y = rounded<T>(y * (full ? load<T>(r.weight, at) : load_tail<T>(r.weight, at, count, 0.0f)));
    }
    return y * vsilu(full ? load<T>(r.gate, at) : load_tail<T>(r.gate, at, count, 0.0f));
  };
  int64_t i = 0;
  for (; i + kLanes <= d; i += kLanes) store<T>(r.out, i, value(i, kLanes));
  if (i < d) store_tail<T>(r.out, i, d - i, value(i, d - i));
}

}  // namespace

void rms_norm_gated_row(const RmsNormGatedRow& r, RowType type, int64_t d, double eps) {
  with_type(type, [&]<RowType T>() { row<T>(r, d, eps); });
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
