// softmax / log_softmax backward rows, compiled once per ISA: one read pass for the row's dot product (or sum),
// one pass that writes the gradient; the caller may split a long row into chunks between the two.
#include "backends/cpu/kernels/softmax_backward.h"
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

template <RowType T>
double dot(const void* g, const void* y, int64_t n, bool log) {
  vd acc = vd{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const vf gv = load<T>(g, i);
    acc += __builtin_convertvector(log ? gv : gv * load<T>(y, i), vd);
  }
  if (i < n) {
    const vf gv = load_tail<T>(g, i, n - i, 0.0f);
    acc += __builtin_convertvector(log ? gv : gv * load_tail<T>(y, i, n - i, 0.0f), vd);
  }
  double s = 0.0;
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

template <RowType T>
void write(const void* g, const void* y, void* gi, int64_t n, double dot, bool log) {
  const vf d = splat(static_cast<float>(dot));
  auto value = [&](vf gv, vf yv) { return log ? gv - vexp(yv) * d : yv * (gv - d); };
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store<T>(gi, i, value(load<T>(g, i), load<T>(y, i)));
  if (i < n) store_tail<T>(gi, i, n - i, value(load_tail<T>(g, i, n - i, 0.0f), load_tail<T>(y, i, n - i, 0.0f)));
}

}  // namespace

double softmax_backward_dot(const void* g, const void* y, RowType type, int64_t n, bool log) {
  return with_type(type, [&]<RowType T>() { return dot<T>(g, y, n, log); });
}

void softmax_backward_write(const void* g, const void* y, void* gi, RowType type, int64_t n, double dot, bool log) {
  with_type(type, [&]<RowType T>() { write<T>(g, y, gi, n, dot, log); });
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
