// Small-M matmul (kernels.h, MatmulRowsPlan): each output row's tile of columns is accumulated in registers as
// a sum over k of B's row k scaled by a(i, k), B read where it lies. complex64 pairs: with b's pair (br, bi)
// and a = (ar, ai), out += ar * (br, bi) + ai * (-bi, br), the swapped and signed copy made in registers.
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

constexpr int kVectors = static_cast<int>(kMatmulRowsTile) / kLanes;

// (x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...): the pairs' i * b.
vf times_i(vf b) {
  vi swap;
  for (int l = 0; l < kLanes; ++l) swap[l] = l ^ 1;
  vf sign;
  for (int l = 0; l < kLanes; ++l) sign[l] = l % 2 == 0 ? -1.0f : 1.0f;
  return __builtin_shuffle(b, swap) * sign;
}

// One output row: floats [f0, f1) of the row (complex: interleaved pairs), f1 - f0 <= kMatmulRowsTile.
template <RowType T, bool kComplex>
void row_tile(const MatmulRowsPlan& p, int64_t i, int64_t f0, int64_t f1) {
  const int64_t width = f1 - f0, full = width / kLanes, tail = width % kLanes;
  vf acc[kVectors + 1];
  for (int v = 0; v <= kVectors; ++v) acc[v] = splat(0.0f);
  const auto add = [&](vf scale, const void* row, auto&& transform) {
    for (int64_t v = 0; v < full; ++v) acc[v] += scale * transform(load<T>(row, f0 + v * kLanes));
    if (tail != 0) acc[full] += scale * transform(load_tail<T>(row, f0 + full * kLanes, tail, 0.0f));
  };
  for (int64_t kk = 0; kk < p.k; ++kk) {
    const int64_t ai = i * p.a_rs + kk * p.a_cs;
    if constexpr (kComplex) {
      const float* a = reinterpret_cast<const float*>(p.a) + 2 * ai;
      const float* row = reinterpret_cast<const float*>(p.b) + 2 * kk * p.b_rs;
      add(splat(a[0]), row, [](vf b) { return b; });
      add(splat(a[1]), row, [](vf b) { return times_i(b); });
    } else {
      const vf av = splat(load1<T>(p.a, ai));
      add(av, p.b + kk * p.b_rs * static_cast<int64_t>(T == RowType::f32 ? 4 : 2), [](vf b) { return b; });
    }
  }
  void* out = p.out + i * p.out_rs * (kComplex ? 8 : static_cast<int64_t>(T == RowType::f32 ? 4 : 2));
  for (int64_t v = 0; v < full; ++v) store<T>(out, f0 + v * kLanes, acc[v]);
  if (tail != 0) store_tail<T>(out, f0 + full * kLanes, tail, acc[full]);
}

}  // namespace

void matmul_rows(const MatmulRowsPlan& p, int64_t n0, int64_t n1) {
  // Complex columns are two floats each; the tile is in floats.
  const int64_t f0 = p.complex ? 2 * n0 : n0, f1 = p.complex ? 2 * n1 : n1;
  for (int64_t i = 0; i < p.m; ++i) {
    if (p.complex) row_tile<RowType::f32, true>(p, i, f0, f1);
    else with_type(p.type, [&]<RowType T>() { row_tile<T, false>(p, i, f0, f1); });
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
