// rms_norm rows, compiled once per ISA: with a residual, one pass forms h = x + residual and stores it (the
// decoder's next residual); then sum(h^2) of the stored, rounded values, and a pass over the row (in cache) that
// writes h * inv_rms * weight.
#include "backends/cpu/kernels/rms_norm.h"
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

template <RowType T>
void row(const RmsNormRow& r, int64_t d, double eps) {
  const void* h = r.x;
  if (r.residual != nullptr) {
    h = r.sum_out;
    int64_t i = 0;
    for (; i + kLanes <= d; i += kLanes) store<T>(r.sum_out, i, load<T>(r.x, i) + load<T>(r.residual, i));
    if (i < d)
      store_tail<T>(r.sum_out, i, d - i, load_tail<T>(r.x, i, d - i, 0.0f) + load_tail<T>(r.residual, i, d - i, 0.0f));
  }
  // Of the rounded sum, as the caller will see it (the row is in cache).
  const double sum = sum_of_squares<T>(h, d);
  const vf inv = splat(static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(d) + eps)));
  auto weight = [&](int64_t at, int64_t count) {
    if (r.weight_f32) return count == kLanes ? load<RowType::f32>(r.weight, at) : load_tail<RowType::f32>(r.weight, at, count, 0.0f);
    return count == kLanes ? load<T>(r.weight, at) : load_tail<T>(r.weight, at, count, 0.0f);
  };
  auto value = [&](vf v, int64_t at, int64_t count) {
    v *= inv;
    if (r.weight != nullptr) v *= weight(at, count);
    return v;
  };
  int64_t i = 0;
  for (; i + kLanes <= d; i += kLanes) store<T>(r.out, i, value(load<T>(h, i), i, kLanes));
  if (i < d) store_tail<T>(r.out, i, d - i, value(load_tail<T>(h, i, d - i, 0.0f), i, d - i));
}

}  // namespace

void rms_norm_row(const RmsNormRow& r, RowType type, int64_t d, double eps) {
  with_type(type, [&]<RowType T>() { row<T>(r, d, eps); });
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
