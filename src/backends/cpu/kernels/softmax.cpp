// softmax / log_softmax row pieces, compiled once per ISA: online statistics in one read pass, one write pass.
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

// Per-lane running max m and sum s of exp(x - m). A block of kBlock vectors raises the max once, so the sum's
// rescaling costs one exp per block; sums are kept in double, as 128K terms in f32 would lose ~1e-5.
struct Online {
  vf m = splat(-kInf);
  vd s = vd{};
  vi nan = vi{};

  template <int kCount>
  void add(const vf (&v)[kCount]) {
    vf bm = m;
    for (int k = 0; k < kCount; ++k) {
      bm = v[k] > bm ? v[k] : bm;   // a NaN never becomes the max; it is flagged instead
      nan |= v[k] != v[k];
    }
    // Lanes still at -inf subtract 0 instead, so that exp(-inf - -inf) never makes a NaN.
    const vf shift = bm == splat(-kInf) ? splat(0.0f) : bm;
    vf e = vexp(v[0] - shift);
    for (int k = 1; k < kCount; ++k) e += vexp(v[k] - shift);
    const vf scale = m == bm ? splat(1.0f) : vexp(m - bm);
    s = s * __builtin_convertvector(scale, vd) + __builtin_convertvector(e, vd);
    m = bm;
  }

  RowStats reduce() const {
    RowStats r{-kInf, 0.0, false};
    for (int j = 0; j < kLanes; ++j) {
      r.max = m[j] > r.max ? m[j] : r.max;
      r.nan = r.nan || nan[j] != 0;
    }
    for (int j = 0; j < kLanes; ++j)
      r.sum += m[j] == r.max ? s[j] : s[j] * std::exp(static_cast<double>(m[j]) - r.max);
    return r;
  }
};

template <RowType T>
RowStats stats(const void* x, int64_t n) {
  constexpr int kBlock = 8;
  Online o;
  int64_t i = 0;
  for (; i + kBlock * kLanes <= n; i += kBlock * kLanes) {
    vf v[kBlock];
    for (int k = 0; k < kBlock; ++k) v[k] = load<T>(x, i + k * kLanes);
    o.add(v);
  }
  for (; i + kLanes <= n; i += kLanes) {
    const vf v[1] = {load<T>(x, i)};
    o.add(v);
  }
  if (i < n) {
    const vf v[1] = {load_tail<T>(x, i, n - i, -kInf)};
    o.add(v);
  }
  return o.reduce();
}

template <RowType T>
void write(const void* x, void* out, int64_t n, float max, float scale, bool log, bool nan) {
  const vf vmax = splat(max), vscale = splat(scale);
  auto value = [&](vf v) {
    if (nan) return splat(std::numeric_limits<float>::quiet_NaN());
    // log: (x - max) is exact near the max (Sterbenz), so the result near 0 is not swamped by max's size.
    return log ? (v - vmax) - vscale : vexp(v - vmax) * vscale;
  };
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store<T>(out, i, value(load<T>(x, i)));
  if (i < n) {
    const vf y = value(load_tail<T>(x, i, n - i, 0.0f));
    for (int64_t j = 0; i + j < n; ++j) store1<T>(out, i + j, y[j]);
  }
}

}  // namespace

RowStats softmax_stats(const void* x, RowType type, int64_t n) {
  switch (type) {
    case RowType::f32: return stats<RowType::f32>(x, n);
    case RowType::bf16: return stats<RowType::bf16>(x, n);
    default: return stats<RowType::f16>(x, n);
  }
}

void softmax_write(const void* x, void* out, RowType type, int64_t n, float max, float scale, bool log, bool nan) {
  switch (type) {
    case RowType::f32: write<RowType::f32>(x, out, n, max, scale, log, nan); break;
    case RowType::bf16: write<RowType::bf16>(x, out, n, max, scale, log, nan); break;
    default: write<RowType::f16>(x, out, n, max, scale, log, nan); break;
  }
}

void exp_f32(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    vf v;
    std::memcpy(&v, x + i, sizeof v);
    v = vexp(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    const vf v = vexp(load_tail<RowType::f32>(x, i, n - i, 0.0f));
    for (int64_t j = 0; i + j < n; ++j) y[i + j] = v[j];
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
