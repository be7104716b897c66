// The generic tier's primitives: each one pass over memory, threaded with parallel_for; the contiguous inner
// loops are the active ISA level's (kernels/loops.h), the strided and exotic-dtype edges plain loops here.
#include "backends/generic/primitives.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/float_rows.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kernel_types.h"
#include "core/fp4_blocks.h"
#include "fourfold/errors.h"
#include "fourfold/parallel.h"

namespace fourfold::generic {
namespace {

// The active level's loops.
struct Loops {
  decltype(&scalar::unary_loop) unary;
  decltype(&scalar::affine_loop) affine;
  decltype(&scalar::binary_rows) binary;
  decltype(&scalar::reduce_rows) reduce;
  decltype(&scalar::widen_row) widen;
  decltype(&scalar::narrow_row) narrow;
  decltype(&scalar::gemm_nt_dots) gemm_dots;
  decltype(&scalar::gemm_nn_axpys) gemm_axpys;
};
#define FOURFOLD_GENERIC_LOOPS(isa) \
  Loops{&isa::unary_loop, &isa::affine_loop, &isa::binary_rows, &isa::reduce_rows, &isa::widen_row, &isa::narrow_row, \
        &isa::gemm_nt_dots, &isa::gemm_nn_axpys}

// One entry per level, in the order of isa_levels.h's list, which is cpu::Isa's own: an entry's position is its
// level by construction.
#define FOURFOLD_GENERIC_LOOPS_ENTRY_(isa) FOURFOLD_GENERIC_LOOPS(isa),
#define FOURFOLD_GEMM_PIECES_ENTRY_(isa) FOURFOLD_GEMM_PIECES(isa),

const Loops& loops() {
  static const Loops table[cpu::kIsaCount] = {FOURFOLD_ISA_LEVELS(FOURFOLD_GENERIC_LOOPS_ENTRY_)};
  return table[static_cast<int>(cpu::active_isa())];
}

const cpu::GemmPieces& gemm_pieces() {
  static const cpu::GemmPieces table[cpu::kIsaCount] = {FOURFOLD_ISA_LEVELS(FOURFOLD_GEMM_PIECES_ENTRY_)};
  return table[static_cast<int>(cpu::active_isa())];
}

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

// Every fp8 code's value as f32 (exact: fp8 values are f32 values): a widening pass by lookup, as fast per
// element as the bit arithmetic a framework's cast uses.
const float* fp8_values(DType dtype) {
  static const auto build = [](DType t) {
    std::array<float, 256> v{};
    for (int code = 0; code < 256; ++code) {
      const uint8_t byte = static_cast<uint8_t>(code);
      v[code] = static_cast<float>(load_as_double(t, &byte));
    }
    return v;
  };
  static const std::array<float, 256> e4m3 = build(DType::f8_e4m3fn), e5m2 = build(DType::f8_e5m2);
  return dtype == DType::f8_e4m3fn ? e4m3.data() : e5m2.data();
}

void load_row(DType dtype, const uint8_t* src, int64_t inner, float* dst, int64_t n) {
  if (inner == 1 && computes(dtype)) return loops().widen(cpu::row_type(dtype, "generic load_row", "dtype"), src, dst, n);
  if (dtype == DType::f8_e4m3fn || dtype == DType::f8_e5m2) {
    const float* values = fp8_values(dtype);
    for (int64_t i = 0; i < n; ++i) dst[i] = values[src[i * inner]];
    return;
  }
  if (computes(dtype)) return cpu::widen_row(dtype, src, inner, n, dst);   // strided: contiguous took the loop above
  const size_t es = dtype_size(dtype);
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(load_as_double(dtype, src + i * inner * es));
}

void store_row(const float* src, DType dtype, uint8_t* dst, int64_t inner, int64_t n) {
  if (inner == 1 && computes(dtype)) return loops().narrow(src, cpu::row_type(dtype, "generic store_row", "dtype"), dst, n);
  if (computes(dtype)) return cpu::narrow_row(dtype, src, 1.0f, n, dst, inner);   // strided
  const size_t es = dtype_size(dtype);
  for (int64_t i = 0; i < n; ++i) store_from_double(dtype, dst + i * inner * es, src[i]);
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
      for (int64_t c0 = 0; c0 < k; c0 += cols_per_scale) {
        const float scale_value = scale_row[c0 / cols_per_scale];
        for (int64_t c = c0, c1 = std::min(k, c0 + cols_per_scale); c < c1; ++c) data[r * k + c] *= scale_value;
      }
    }
  });
  return w;
}

Tensor dequantize_fp4_f32(const Tensor& weight, const Tensor& scale, float global) {
  const int64_t n = weight.size(0), k = 2 * weight.size(1);
  Tensor w = empty_f32({n, k});
  float* data = w.data_as<float>();
  parallel_for(0, n, grain_rows(k), [&](int64_t begin, int64_t end) {
    fp4_rows_f32(weight, scale, global, begin, end - begin, data + begin * k);
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
  const auto loop = loops().unary;
  parallel_for(0, n, kGrainElements, [&](int64_t begin, int64_t end) { loop(op, x + begin, y + begin, end - begin); });
}

void affine(const float* x, float scale, float shift, float* y, int64_t n) {
  const auto loop = loops().affine;
  parallel_for(0, n, kGrainElements,
               [&](int64_t begin, int64_t end) { loop(x + begin, scale, shift, y + begin, end - begin); });
}

void binary(Binary op, const float* a, const float* b, Broadcast broadcast, float* y, int64_t rows, int64_t cols) {
  const auto loop = loops().binary;
  if (broadcast == Broadcast::none) {
    // Elementwise: one long row, split by elements rather than by (possibly few, long) rows.
    parallel_for(0, rows * cols, kGrainElements, [&](int64_t begin, int64_t end) {
      loop(op, a + begin, b + begin, Broadcast::none, y + begin, 0, 1, end - begin);
    });
    return;
  }
  parallel_for(0, rows, grain_rows(cols), [&](int64_t begin, int64_t end) { loop(op, a, b, broadcast, y, begin, end, cols); });
}

void row_reduce(Reduce op, const float* x, int64_t rows, int64_t cols, float* out) {
  const auto loop = loops().reduce;
  parallel_for(0, rows, grain_rows(cols), [&](int64_t begin, int64_t end) { loop(op, x, begin, end, cols, out); });
}

namespace {

// Both layouts of B through the packed GEMM (above kGemmDotRows rows) or the small-M loops: b_rs / b_cs are
// the element strides of B's [k, n] view.
template <class Small>
void gemm_any(const float* a, const float* b, int64_t b_rs, int64_t b_cs, float* c, int64_t m, int64_t n, int64_t k,
              int64_t batches, Small small) {
  if (m == 0 || n == 0 || batches == 0) return;
  if (m > kGemmDotRows) {
    std::vector<cpu::GemmProblem> problems;
    for (int64_t t = 0; t < batches; ++t)
      problems.push_back({m, n, k,
                          cpu::GemmOperand{reinterpret_cast<const uint8_t*>(a + t * m * k), cpu::RowType::f32, k, 1},
                          cpu::GemmOperand{reinterpret_cast<const uint8_t*>(b + t * n * k), cpu::RowType::f32, b_rs, b_cs},
                          cpu::GemmOut{reinterpret_cast<uint8_t*>(c + t * m * n), cpu::RowType::f32, n, 1, nullptr,
                                       cpu::RowType::f32, 0}});
    cpu::gemm(problems, gemm_pieces());
    return;
  }
  if (k == 0) {
    std::fill(c, c + batches * m * n, 0.0f);
    return;
  }
  // Column tiles of all m rows, of every batch: each thread streams its own part of B once.
  constexpr int64_t kTileN = 64;
  const int64_t tiles_n = (n + kTileN - 1) / kTileN;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / (std::min(n, kTileN) * k));
  parallel_for(0, batches * tiles_n, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t batch = t / tiles_n, n0 = (t % tiles_n) * kTileN;
      small(a + batch * m * k, b + batch * n * k, c + batch * m * n, n0, std::min(n, n0 + kTileN));
    }
  });
}

}  // namespace

void gemm_nt(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t batches) {
  // B [n, k] row-major is the operand [k, n] with element (kk, j) at j * k + kk.
  const auto dots = loops().gemm_dots;
  gemm_any(a, b, 1, k, c, m, n, k, batches, [&](const float* ab, const float* bb, float* cb, int64_t n0, int64_t n1) {
    dots(ab, bb, cb, n, k, 0, m, n0, n1);
  });
}

void gemm_nn(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t batches) {
  const auto axpys = loops().gemm_axpys;
  gemm_any(a, b, n, 1, c, m, n, k, batches, [&](const float* ab, const float* bb, float* cb, int64_t n0, int64_t n1) {
    axpys(ab, bb, cb, k, n, 0, m, n0, n1);
  });
}

}  // namespace fourfold::generic
