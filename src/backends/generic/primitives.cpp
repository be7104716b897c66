// The generic tier's primitives: each one pass over memory, threaded with parallel_for, with inner loops
// simple enough for the compiler to vectorise.
#include "backends/generic/primitives.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "fourfold/parallel.h"

namespace fourfold::generic {
namespace {

// Rows per chunk so that a chunk holds at least kGrainElements elements.
int64_t grain_rows(int64_t cols) { return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, cols)); }

// A tensor seen as rows of its last dim: the element offset of each row's start and the inner stride.
struct Rows {
  int64_t rows = 0, cols = 1, inner = 1;
  explicit Rows(const Tensor& t) {
    cols = t.dim() == 0 ? 1 : t.size(-1);
    inner = t.dim() == 0 ? 1 : t.stride(-1);
    rows = cols == 0 ? 0 : t.numel() / cols;
  }
};

int64_t row_offset(const Tensor& t, int64_t r) {
  int64_t off = 0;
  for (int d = t.dim() - 2; d >= 0; --d) {
    const int64_t s = t.size(d);
    off += (r % s) * t.stride(d);
    r /= s;
  }
  return off;
}

// Round to nearest even on the top 16 bits, NaN kept quiet: the same bits as f32_to_bf16, inlined so that the
// store loop has no call in it.
inline uint16_t round_to_bf16(float v) {
  const uint32_t u = std::bit_cast<uint32_t>(v);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

void load_row(DType dtype, const uint8_t* src, int64_t inner, float* dst, int64_t n) {
  switch (dtype) {
    case DType::f32: {
      const auto* s = reinterpret_cast<const float*>(src);
      if (inner == 1) std::memcpy(dst, s, static_cast<size_t>(n) * sizeof(float));
      else for (int64_t i = 0; i < n; ++i) dst[i] = s[i * inner];
      return;
    }
    case DType::bf16: {
      const auto* s = reinterpret_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = std::bit_cast<float>(static_cast<uint32_t>(s[i * inner]) << 16);
      return;
    }
    case DType::f16: {
      const auto* s = reinterpret_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(s[i * inner]);
      return;
    }
    default: {
      const size_t es = dtype_size(dtype);
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(load_as_double(dtype, src + i * inner * es));
    }
  }
}

void store_row(const float* src, DType dtype, uint8_t* dst, int64_t inner, int64_t n) {
  switch (dtype) {
    case DType::f32: {
      auto* d = reinterpret_cast<float*>(dst);
      if (inner == 1) std::memcpy(d, src, static_cast<size_t>(n) * sizeof(float));
      else for (int64_t i = 0; i < n; ++i) d[i * inner] = src[i];
      return;
    }
    case DType::bf16: {
      auto* d = reinterpret_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i * inner] = round_to_bf16(src[i]);
      return;
    }
    case DType::f16: {
      auto* d = reinterpret_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i * inner] = f32_to_f16(src[i]);
      return;
    }
    default: {
      const size_t es = dtype_size(dtype);
      for (int64_t i = 0; i < n; ++i) store_from_double(dtype, dst + i * inner * es, src[i]);
    }
  }
}

template <class T>
void copy_strided_typed(const uint8_t* src, int64_t s_inner, uint8_t* dst, int64_t d_inner, int64_t n) {
  const auto* s = reinterpret_cast<const T*>(src);
  auto* d = reinterpret_cast<T*>(dst);
  for (int64_t j = 0; j < n; ++j) d[j * d_inner] = s[j * s_inner];
}

// One row of a same-dtype copy with at least one side strided: element-sized moves as plain integer loads.
void copy_strided_row(const uint8_t* src, int64_t s_inner, uint8_t* dst, int64_t d_inner, int64_t n, int64_t es) {
  switch (es) {
    case 1: return copy_strided_typed<uint8_t>(src, s_inner, dst, d_inner, n);
    case 2: return copy_strided_typed<uint16_t>(src, s_inner, dst, d_inner, n);
    case 4: return copy_strided_typed<uint32_t>(src, s_inner, dst, d_inner, n);
    case 8: return copy_strided_typed<uint64_t>(src, s_inner, dst, d_inner, n);
    default:
      for (int64_t j = 0; j < n; ++j)
        std::memcpy(dst + j * d_inner * es, src + j * s_inner * es, static_cast<size_t>(es));
  }
}

template <class T>
void fill_typed(const uint8_t* pattern, uint8_t* dst, int64_t inner, int64_t n) {
  T v;
  std::memcpy(&v, pattern, sizeof(T));
  auto* d = reinterpret_cast<T*>(dst);
  for (int64_t j = 0; j < n; ++j) d[j * inner] = v;
}

void fill_strided_row(const uint8_t* pattern, uint8_t* dst, int64_t inner, int64_t n, int64_t es) {
  switch (es) {
    case 1: return fill_typed<uint8_t>(pattern, dst, inner, n);
    case 2: return fill_typed<uint16_t>(pattern, dst, inner, n);
    case 4: return fill_typed<uint32_t>(pattern, dst, inner, n);
    case 8: return fill_typed<uint64_t>(pattern, dst, inner, n);
    default:
      for (int64_t j = 0; j < n; ++j) std::memcpy(dst + j * inner * es, pattern, static_cast<size_t>(es));
  }
}

float unary_one(Unary op, float v) {
  switch (op) {
    case Unary::neg: return -v;
    case Unary::exp: return std::exp(v);
    case Unary::log: return std::log(v);
    case Unary::reciprocal: return 1.0f / v;
    case Unary::rsqrt: return 1.0f / std::sqrt(v);
    case Unary::square: return v * v;
    case Unary::cube: return v * v * v;
    case Unary::erf: return std::erf(v);
    case Unary::tanh: return std::tanh(v);
  }
  return v;
}

// The op is a template parameter so that each loop is a straight-line body the compiler can vectorise.
template <Unary op>
void unary_loop(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = unary_one(op, x[i]);
}

template <Binary op>
inline float binary_one(float a, float b) {
  if constexpr (op == Binary::add) return a + b;
  else if constexpr (op == Binary::sub) return a - b;
  else if constexpr (op == Binary::mul) return a * b;
  else return a / b;
}

template <Binary op>
void binary_typed(const float* a, const float* b, Broadcast bc, float* y, int64_t rows, int64_t cols) {
  if (bc == Broadcast::none) {
    parallel_for(0, rows * cols, kGrainElements, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = binary_one<op>(a[i], b[i]);
    });
    return;
  }
  parallel_for(0, rows, grain_rows(cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* ar = a + r * cols;
      float* yr = y + r * cols;
      if (bc == Broadcast::per_row) {
        const float br = b[r];
        for (int64_t j = 0; j < cols; ++j) yr[j] = binary_one<op>(ar[j], br);
      } else {
        for (int64_t j = 0; j < cols; ++j) yr[j] = binary_one<op>(ar[j], b[j]);
      }
    }
  });
}

// Independent lanes instead of one running value: the order stays fixed (no -ffast-math needed) and the
// lane loop vectorises.
constexpr int kLanes = 16;

float sum_row(const float* x, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += x[i + l];
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  for (; i < n; ++i) s += x[i];
  return s;
}

float max_row(const float* x, int64_t n) {
  float acc[kLanes];
  std::fill(acc, acc + kLanes, -std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] = x[i + l] > acc[l] ? x[i + l] : acc[l];
  float m = -std::numeric_limits<float>::infinity();
  for (int l = 0; l < kLanes; ++l) m = acc[l] > m ? acc[l] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// Four dot products of one row of A with four rows of B over [0, k): A is loaded once for all four.
void dot_1x4(const float* a, const float* b0, const float* b1, const float* b2, const float* b3, int64_t k,
             float* out) {
  constexpr int L = 8;
  float s0[L] = {}, s1[L] = {}, s2[L] = {}, s3[L] = {};
  int64_t i = 0;
  for (; i + L <= k; i += L)
    for (int l = 0; l < L; ++l) {
      const float av = a[i + l];
      s0[l] += av * b0[i + l];
      s1[l] += av * b1[i + l];
      s2[l] += av * b2[i + l];
      s3[l] += av * b3[i + l];
    }
  float r0 = 0, r1 = 0, r2 = 0, r3 = 0;
  for (int l = 0; l < L; ++l) r0 += s0[l], r1 += s1[l], r2 += s2[l], r3 += s3[l];
  for (; i < k; ++i) r0 += a[i] * b0[i], r1 += a[i] * b1[i], r2 += a[i] * b2[i], r3 += a[i] * b3[i];
  out[0] += r0, out[1] += r1, out[2] += r2, out[3] += r3;
}

float dot_1x1(const float* a, const float* b, int64_t k) {
  constexpr int L = 8;
  float s[L] = {};
  int64_t i = 0;
  for (; i + L <= k; i += L)
    for (int l = 0; l < L; ++l) s[l] += a[i + l] * b[i + l];
  float r = 0;
  for (int l = 0; l < L; ++l) r += s[l];
  for (; i < k; ++i) r += a[i] * b[i];
  return r;
}

}  // namespace

bool computes(DType dtype) { return dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16; }

Tensor empty_f32(const Shape& shape) { return Tensor::empty(shape, DType::f32); }

Tensor to_f32(const Tensor& x) {
  if (x.dtype() == DType::f32 && x.is_contiguous()) return x;
  Tensor y = empty_f32(x.shape());
  const Rows rows(x);
  if (rows.rows == 0) return y;
  const auto* base = static_cast<const uint8_t*>(x.data());
  const size_t es = dtype_size(x.dtype());
  float* out = y.data_as<float>();
  parallel_for(0, rows.rows, grain_rows(rows.cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      load_row(x.dtype(), base + row_offset(x, r) * static_cast<int64_t>(es), rows.inner, out + r * rows.cols,
               rows.cols);
  });
  return y;
}

Tensor dequantize_f32(const Tensor& weight, const Tensor& scale, ScaleRecipe recipe) {
  Tensor w = to_f32(weight);
  const Tensor s = to_f32(scale);
  const int64_t n = w.size(0), k = w.size(1), scale_cols = s.size(1);
  const bool blocks = recipe == ScaleRecipe::block_128x128;
  const bool per_row = recipe == ScaleRecipe::rowwise || recipe == ScaleRecipe::block_1x128;
  const int64_t rows_per_scale = blocks ? 128 : (per_row ? 1 : std::max<int64_t>(n, 1));
  const int64_t cols_per_scale = blocks || recipe == ScaleRecipe::block_1x128 ? 128 : std::max<int64_t>(k, 1);
  float* data = w.data_as<float>();
  const float* sd = s.data_as<float>();
  parallel_for(0, n, grain_rows(k), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* scale_row = sd + (r / rows_per_scale) * scale_cols;
      for (int64_t c = 0; c < k; ++c) data[r * k + c] *= scale_row[c / cols_per_scale];
    }
  });
  return w;
}

void from_f32(const Tensor& src, Tensor& out) {
  const Rows rows(out);
  if (rows.rows == 0) return;
  auto* base = static_cast<uint8_t*>(out.data());
  const size_t es = dtype_size(out.dtype());
  const float* in = src.data_as<float>();
  parallel_for(0, rows.rows, grain_rows(rows.cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      store_row(in + r * rows.cols, out.dtype(), base + row_offset(out, r) * static_cast<int64_t>(es), rows.inner,
                rows.cols);
  });
}

void copy(const Tensor& src_in, Tensor& dst) {
  const Tensor src = src_in.shape() == dst.shape() ? src_in : src_in.expand(dst.shape());
  const Rows rows(dst);
  if (rows.rows == 0) return;
  const int64_t s_inner = src.dim() == 0 ? 1 : src.stride(-1);
  const int64_t es = static_cast<int64_t>(dtype_size(dst.dtype()));
  const auto* s_base = static_cast<const uint8_t*>(src.data());
  auto* d_base = static_cast<uint8_t*>(dst.data());
  parallel_for(0, rows.rows, grain_rows(rows.cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* s = s_base + row_offset(src, r) * es;
      uint8_t* d = d_base + row_offset(dst, r) * es;
      if (s_inner == 1 && rows.inner == 1) {
        std::memcpy(d, s, static_cast<size_t>(rows.cols * es));
      } else {
        copy_strided_row(s, s_inner, d, rows.inner, rows.cols, es);
      }
    }
  });
}

void fill(Tensor& t, double value) {
  const Rows rows(t);
  if (rows.rows == 0) return;
  uint8_t pattern[16];
  store_from_double(t.dtype(), pattern, value);
  const int64_t es = static_cast<int64_t>(dtype_size(t.dtype()));
  auto* base = static_cast<uint8_t*>(t.data());
  // A contiguous tensor is one long row: split it by elements rather than by (possibly few, long) rows.
  const bool flat = t.is_contiguous();
  const int64_t count = flat ? t.numel() : rows.rows;
  parallel_for(0, count, flat ? kGrainElements : grain_rows(rows.cols), [&](int64_t begin, int64_t end) {
    if (flat) {
      fill_strided_row(pattern, base + begin * es, 1, end - begin, es);
      return;
    }
    for (int64_t r = begin; r < end; ++r) fill_strided_row(pattern, base + row_offset(t, r) * es, rows.inner, rows.cols, es);
  });
}

void unary(Unary op, const float* x, float* y, int64_t n) {
  parallel_for(0, n, kGrainElements, [&](int64_t begin, int64_t end) {
    const float* xs = x + begin;
    float* ys = y + begin;
    const int64_t len = end - begin;
    switch (op) {
      case Unary::neg: unary_loop<Unary::neg>(xs, ys, len); break;
      case Unary::exp: unary_loop<Unary::exp>(xs, ys, len); break;
      case Unary::log: unary_loop<Unary::log>(xs, ys, len); break;
      case Unary::reciprocal: unary_loop<Unary::reciprocal>(xs, ys, len); break;
      case Unary::rsqrt: unary_loop<Unary::rsqrt>(xs, ys, len); break;
      case Unary::square: unary_loop<Unary::square>(xs, ys, len); break;
      case Unary::cube: unary_loop<Unary::cube>(xs, ys, len); break;
      case Unary::erf: unary_loop<Unary::erf>(xs, ys, len); break;
      case Unary::tanh: unary_loop<Unary::tanh>(xs, ys, len); break;
    }
  });
}

void affine(const float* x, float scale, float shift, float* y, int64_t n) {
  parallel_for(0, n, kGrainElements, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = x[i] * scale + shift;
  });
}

void binary(Binary op, const float* a, const float* b, Broadcast broadcast, float* y, int64_t rows, int64_t cols) {
  switch (op) {
    case Binary::add: binary_typed<Binary::add>(a, b, broadcast, y, rows, cols); break;
    case Binary::sub: binary_typed<Binary::sub>(a, b, broadcast, y, rows, cols); break;
    case Binary::mul: binary_typed<Binary::mul>(a, b, broadcast, y, rows, cols); break;
    case Binary::div: binary_typed<Binary::div>(a, b, broadcast, y, rows, cols); break;
  }
}

void row_reduce(Reduce op, const float* x, int64_t rows, int64_t cols, float* out) {
  parallel_for(0, rows, grain_rows(cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      out[r] = op == Reduce::max ? max_row(x + r * cols, cols) : sum_row(x + r * cols, cols);
  });
}

void gemm_nt(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  if (m == 0 || n == 0) return;
  // Tiles of C: a tile's rows of B (kTileN x kBlockK floats, 64 KiB) stay in L2 while every row of A in the
  // tile streams past them.
  constexpr int64_t kTileM = 32, kTileN = 64, kBlockK = 256;
  const int64_t tiles_m = (m + kTileM - 1) / kTileM, tiles_n = (n + kTileN - 1) / kTileN;
  const int64_t tile_work = std::min(m, kTileM) * std::min(n, kTileN) * std::max<int64_t>(k, 1);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / tile_work);
  parallel_for(0, tiles_m * tiles_n, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t m0 = (t / tiles_n) * kTileM, n0 = (t % tiles_n) * kTileN;
      const int64_t m1 = std::min(m, m0 + kTileM), n1 = std::min(n, n0 + kTileN);
      for (int64_t i = m0; i < m1; ++i) std::fill(c + i * n + n0, c + i * n + n1, 0.0f);
      for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
        const int64_t kl = std::min(kBlockK, k - k0);
        for (int64_t i = m0; i < m1; ++i) {
          const float* ai = a + i * k + k0;
          float* ci = c + i * n;
          int64_t j = n0;
          for (; j + 4 <= n1; j += 4)
            dot_1x4(ai, b + j * k + k0, b + (j + 1) * k + k0, b + (j + 2) * k + k0, b + (j + 3) * k + k0, kl, ci + j);
          for (; j < n1; ++j) ci[j] += dot_1x1(ai, b + j * k + k0, kl);
        }
      }
    }
  });
}

}  // namespace fourfold::generic
