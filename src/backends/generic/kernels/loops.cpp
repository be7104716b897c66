// The generic tier's inner loops for one ISA level (loops.h): plain vector loops over f32 rows, built on the
// same lanes and loads as the dedicated kernels (cpu/kernels/vec.h).
#include "backends/generic/kernels/loops.h"

#include <cmath>

#include "backends/cpu/kernels/vec.h"

namespace fourfold::generic::FOURFOLD_ISA_NAMESPACE {
namespace {

using namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE;   // kLanes, vf, splat, vexp, load, store, with_type
using cpu::RowType;

// y = f(x) lane-wise over n floats, the tail through one partial vector.
template <class F>
void map(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store<RowType::f32>(y, i, f(load<RowType::f32>(x, i)));
  if (i < n) store_tail<RowType::f32>(y, i, n - i, f(load_tail<RowType::f32>(x, i, n - i, 0.0f)));
}

template <Binary op>
vf apply(vf a, vf b) {
  if constexpr (op == Binary::add) return a + b;
  else if constexpr (op == Binary::sub) return a - b;
  else if constexpr (op == Binary::mul) return a * b;
  else return a / b;
}

template <Binary op>
void binary_typed(const float* a, const float* b, Broadcast bc, float* y, int64_t r0, int64_t r1, int64_t cols) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* ar = a + r * cols;
    float* yr = y + r * cols;
    int64_t j = 0;
    if (bc == Broadcast::per_row) {
      const vf br = splat(b[r]);
      for (; j + kLanes <= cols; j += kLanes) store<RowType::f32>(yr, j, apply<op>(load<RowType::f32>(ar, j), br));
      if (j < cols) store_tail<RowType::f32>(yr, j, cols - j, apply<op>(load_tail<RowType::f32>(ar, j, cols - j, 1.0f), br));
      continue;
    }
    const float* br = bc == Broadcast::none ? b + r * cols : b;
    for (; j + kLanes <= cols; j += kLanes)
      store<RowType::f32>(yr, j, apply<op>(load<RowType::f32>(ar, j), load<RowType::f32>(br, j)));
    if (j < cols)
      store_tail<RowType::f32>(yr, j, cols - j,
                               apply<op>(load_tail<RowType::f32>(ar, j, cols - j, 1.0f),
                                         load_tail<RowType::f32>(br, j, cols - j, 1.0f)));
  }
}

// Lanes added in a fixed order, so a row's sum does not depend on how rows were split among threads.
float lane_sum(vf v) {
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += v[l];
  return s;
}

float row_sum(const float* x, int64_t n) {
  vf acc = splat(0.0f);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) acc += load<RowType::f32>(x, i);
  float s = lane_sum(acc);
  for (; i < n; ++i) s += x[i];
  return s;
}

float row_max(const float* x, int64_t n) {
  vf acc = splat(-kInf);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const vf v = load<RowType::f32>(x, i);
    acc = v > acc ? v : acc;   // a NaN lane compares false and is skipped
  }
  float m = -kInf;
  for (int l = 0; l < kLanes; ++l) m = acc[l] > m ? acc[l] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// The dot products of one row of A with four rows of B over [0, k).
void dot_1x4(const float* a, const float* b, int64_t k, float* out) {
  const float* b0 = b;
  const float* b1 = b + k;
  const float* b2 = b + 2 * k;
  const float* b3 = b + 3 * k;
  vf s0 = splat(0.0f), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + kLanes <= k; i += kLanes) {
    const vf av = load<RowType::f32>(a, i);
    s0 += av * load<RowType::f32>(b0, i);
    s1 += av * load<RowType::f32>(b1, i);
    s2 += av * load<RowType::f32>(b2, i);
    s3 += av * load<RowType::f32>(b3, i);
  }
  if (i < k) {
    const int64_t t = k - i;
    const vf av = load_tail<RowType::f32>(a, i, t, 0.0f);
    s0 += av * load_tail<RowType::f32>(b0, i, t, 0.0f);
    s1 += av * load_tail<RowType::f32>(b1, i, t, 0.0f);
    s2 += av * load_tail<RowType::f32>(b2, i, t, 0.0f);
    s3 += av * load_tail<RowType::f32>(b3, i, t, 0.0f);
  }
  out[0] = lane_sum(s0), out[1] = lane_sum(s1), out[2] = lane_sum(s2), out[3] = lane_sum(s3);
}

float dot_1x1(const float* a, const float* b, int64_t k) {
  vf s = splat(0.0f);
  int64_t i = 0;
  for (; i + kLanes <= k; i += kLanes) s += load<RowType::f32>(a, i) * load<RowType::f32>(b, i);
  if (i < k) s += load_tail<RowType::f32>(a, i, k - i, 0.0f) * load_tail<RowType::f32>(b, i, k - i, 0.0f);
  return lane_sum(s);
}

}  // namespace

void unary_loop(Unary op, const float* x, float* y, int64_t n) {
  switch (op) {
    case Unary::neg: return map(x, y, n, [](vf v) { return -v; });
    case Unary::exp: return map(x, y, n, [](vf v) { return vexp(v); });
    case Unary::reciprocal: return map(x, y, n, [](vf v) { return splat(1.0f) / v; });
    case Unary::square: return map(x, y, n, [](vf v) { return v * v; });
    case Unary::cube: return map(x, y, n, [](vf v) { return v * v * v; });
    // sqrt vectorizes (this file is built with -fno-math-errno); log, erf and tanh stay libm calls.
    case Unary::rsqrt: for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / std::sqrt(x[i]); return;
    case Unary::log: for (int64_t i = 0; i < n; ++i) y[i] = std::log(x[i]); return;
    case Unary::erf: for (int64_t i = 0; i < n; ++i) y[i] = std::erf(x[i]); return;
    case Unary::tanh: for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]); return;
    // PyTorch's softplus (beta 1, threshold 20): x itself above 20.
    case Unary::softplus: for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 20.0f ? x[i] : std::log1p(std::exp(x[i])); return;
  }
}

void affine_loop(const float* x, float scale, float shift, float* y, int64_t n) {
  const vf s = splat(scale), t = splat(shift);
  map(x, y, n, [&](vf v) { return v * s + t; });
}

void binary_rows(Binary op, const float* a, const float* b, Broadcast bc, float* y, int64_t r0, int64_t r1,
                 int64_t cols) {
  switch (op) {
    case Binary::add: return binary_typed<Binary::add>(a, b, bc, y, r0, r1, cols);
    case Binary::sub: return binary_typed<Binary::sub>(a, b, bc, y, r0, r1, cols);
    case Binary::mul: return binary_typed<Binary::mul>(a, b, bc, y, r0, r1, cols);
    case Binary::div: return binary_typed<Binary::div>(a, b, bc, y, r0, r1, cols);
  }
}

void reduce_rows(Reduce op, const float* x, int64_t r0, int64_t r1, int64_t cols, float* out) {
  for (int64_t r = r0; r < r1; ++r) out[r] = op == Reduce::max ? row_max(x + r * cols, cols) : row_sum(x + r * cols, cols);
}

void widen_row(RowType type, const void* src, float* dst, int64_t n) {
  with_type(type, [&]<RowType T>() {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) store<RowType::f32>(dst, i, load<T>(src, i));
    for (; i < n; ++i) dst[i] = load1<T>(src, i);
  });
}

void narrow_row(const float* src, RowType type, void* dst, int64_t n) {
  with_type(type, [&]<RowType T>() {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) store<T>(dst, i, load<RowType::f32>(src, i));
    for (; i < n; ++i) store1<T>(dst, i, src[i]);
  });
}

void gemm_nt_dots(const float* a, const float* b, float* c, int64_t ldc, int64_t k, int64_t m0, int64_t m1,
                  int64_t n0, int64_t n1) {
  // Four rows of B at a time stay in L1/L2 while every row of A in the tile passes them.
  int64_t j = n0;
  for (; j + 4 <= n1; j += 4)
    for (int64_t i = m0; i < m1; ++i) dot_1x4(a + i * k, b + j * k, k, c + i * ldc + j);
  for (; j < n1; ++j)
    for (int64_t i = m0; i < m1; ++i) c[i * ldc + j] = dot_1x1(a + i * k, b + j * k, k);
}

void gemm_nn_axpys(const float* a, const float* b, float* c, int64_t k, int64_t n, int64_t m0, int64_t m1,
                   int64_t n0, int64_t n1) {
  constexpr int kVectors = 64 / kLanes;   // 64 columns of C in registers
  const int64_t cols = n1 - n0, full = cols / kLanes, tail = cols % kLanes;
  for (int64_t i = m0; i < m1; ++i) {
    vf acc[kVectors + 1];
    for (int v = 0; v <= kVectors; ++v) acc[v] = splat(0.0f);
    for (int64_t kk = 0; kk < k; ++kk) {
      const vf av = splat(a[i * k + kk]);
      const float* row = b + kk * n + n0;
      for (int64_t v = 0; v < full; ++v) acc[v] += av * load<RowType::f32>(row, v * kLanes);
      if (tail != 0) acc[full] += av * load_tail<RowType::f32>(row, full * kLanes, tail, 0.0f);
    }
    float* ci = c + i * n + n0;
    for (int64_t v = 0; v < full; ++v) store<RowType::f32>(ci, v * kLanes, acc[v]);
    if (tail != 0) store_tail<RowType::f32>(ci, full * kLanes, tail, acc[full]);
  }
}

}  // namespace fourfold::generic::FOURFOLD_ISA_NAMESPACE
