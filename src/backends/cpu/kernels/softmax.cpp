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

  // kept (kCount vectors, or null) receives the exps the sum adds, shift (one vector) the block's shift.
  template <int kCount>
  void add(const vf (&v)[kCount], float* kept, float* shift_out) {
    vf bm = m;
    for (int k = 0; k < kCount; ++k) {
      bm = v[k] > bm ? v[k] : bm;   // a NaN never becomes the max; it is flagged instead
      nan |= v[k] != v[k];
    }
    // Lanes still at -inf subtract 0 instead, so that exp(-inf - -inf) never makes a NaN.
    const vf shift = bm == splat(-kInf) ? splat(0.0f) : bm;
    vf e = splat(0.0f);
    for (int k = 0; k < kCount; ++k) {
      const vf ek = vexp<true>(v[k] - shift);
      if (kept != nullptr) store<RowType::f32>(kept, k * kLanes, ek);
      e += ek;
    }
    // A lane at -inf keeps only zeros; its shift -inf makes the write pass's factor 0 too.
    if (kept != nullptr) store<RowType::f32>(shift_out, 0, bm);
    const vf scale = m == bm ? splat(1.0f) : vexp<true>(m - bm);
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

constexpr int kBlock = 8;

// The blocks both passes walk, in order: kBlock vectors at a time, then single vectors, then a last partial
// vector. fn(i, vectors, valid) gets the block's first element, its vector count and the valid elements of its
// last vector.
template <class Fn>
void for_each_block(int64_t n, Fn&& fn) {
  int64_t i = 0;
  for (; i + kBlock * kLanes <= n; i += kBlock * kLanes) fn.template operator()<kBlock>(i, kLanes);
  for (; i + kLanes <= n; i += kLanes) fn.template operator()<1>(i, kLanes);
  if (i < n) fn.template operator()<1>(i, n - i);
}

template <RowType T>
RowStats stats(const void* x, int64_t n, float* kept, float* shifts) {
  Online o;
  int64_t block = 0;
  for_each_block(n, [&]<int kCount>(int64_t i, int64_t valid) {
    vf v[kCount];
    for (int k = 0; k + 1 < kCount; ++k) v[k] = load<T>(x, i + k * kLanes);
    const int64_t last = i + (kCount - 1) * kLanes;
    v[kCount - 1] = valid == kLanes ? load<T>(x, last) : load_tail<T>(x, last, valid, -kInf);
    o.add(v, kept == nullptr ? nullptr : kept + i, kept == nullptr ? nullptr : shifts + block * kLanes);
    ++block;
  });
  return o.reduce();
}

template <RowType T>
void write_kept(const float* kept, const float* shifts, void* out, int64_t n, float max, float scale, bool nan) {
  const vf vmax = splat(max), vscale = splat(scale);
  int64_t block = 0;
  for_each_block(n, [&]<int kCount>(int64_t i, int64_t valid) {
    const vf factor = nan ? splat(std::numeric_limits<float>::quiet_NaN())
                          : vexp<true>(load<RowType::f32>(shifts, block * kLanes) - vmax) * vscale;
    ++block;
    for (int k = 0; k + 1 < kCount; ++k) store<T>(out, i + k * kLanes, load<RowType::f32>(kept, i + k * kLanes) * factor);
    const int64_t last = i + (kCount - 1) * kLanes;
    const vf y = load<RowType::f32>(kept, last) * factor;   // the kept buffer has a vector of slack
    if (valid == kLanes) store<T>(out, last, y);
    else store_tail<T>(out, last, valid, y);
  });
}

template <RowType T>
void write(const void* x, void* out, int64_t n, float max, float scale, bool log, bool nan) {
  const vf vmax = splat(max), vscale = splat(scale);
  auto value = [&](vf v) {
    if (nan) return splat(std::numeric_limits<float>::quiet_NaN());
    // log: (x - max) is exact near the max (Sterbenz), so the result near 0 is not swamped by max's size.
    return log ? (v - vmax) - vscale : vexp<true>(v - vmax) * vscale;
  };
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store<T>(out, i, value(load<T>(x, i)));
  if (i < n) {
    const vf y = value(load_tail<T>(x, i, n - i, 0.0f));
    for (int64_t j = 0; i + j < n; ++j) store1<T>(out, i + j, y[j]);
  }
}

}  // namespace

RowStats softmax_stats(const void* x, RowType type, int64_t n, float* kept, float* shifts) {
  return with_type(type, [&]<RowType T>() { return stats<T>(x, n, kept, shifts); });
}

void softmax_write_kept(const float* kept, const float* shifts, void* out, RowType type, int64_t n, float max,
                        float scale, bool nan) {
  with_type(type, [&]<RowType T>() { write_kept<T>(kept, shifts, out, n, max, scale, nan); });
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
