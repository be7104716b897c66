// silu(gate) * up in one pass, compiled once per ISA: x / (1 + exp(-x)) * u, PyTorch's form of silu, so that
// silu(-inf) is -inf / inf = NaN as on the other tiers.
#include "backends/cpu/kernels/silu_mul.h"
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

inline vf silu_times(vf g, vf u) { return vsilu(g) * u; }

template <RowType T>
void run(const void* gate, const void* up, void* out, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store<T>(out, i, silu_times(load<T>(gate, i), load<T>(up, i)));
  if (i < n)
    store_tail<T>(out, i, n - i, silu_times(load_tail<T>(gate, i, n - i, 0.0f), load_tail<T>(up, i, n - i, 0.0f)));
}

}  // namespace

void silu_mul(const void* gate, const void* up, void* out, RowType type, int64_t n) {
  with_type(type, [&]<RowType T>() { run<T>(gate, up, out, n); });
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
