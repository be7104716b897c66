// sigmoid in one pass, compiled once per ISA. vexp(-x) overflows to inf for x below about -88, and 1 / inf is
// the 0 that PyTorch gives; a NaN stays NaN through exp and the division.
#include "backends/cpu/kernels/sigmoid.h"
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

inline vf logistic(vf x) { return splat(1.0f) / (splat(1.0f) + vexp(-x)); }

template <RowType T>
void run(const void* x, void* out, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store<T>(out, i, logistic(load<T>(x, i)));
  if (i < n) store_tail<T>(out, i, n - i, logistic(load_tail<T>(x, i, n - i, 0.0f)));
}

}  // namespace

void sigmoid(const void* x, void* out, RowType type, int64_t n) {
  with_type(type, [&]<RowType T>() { run<T>(x, out, n); });
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
