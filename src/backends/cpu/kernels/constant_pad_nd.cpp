// constant_pad_nd rows, compiled once per ISA: each output row is fill, copy, fill, every element written once.
#include <cstring>

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

// Plain loops on purpose: at -O3 GCC vectorizes them with the level's vector width (-m flags of this build).
template <class T>
void fill(T* dst, int64_t n, T value) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}

template <class T>
void gather(T* dst, const T* src, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

template <class T>
void rows(const PadPlan& p, int64_t row_begin, int64_t row_end) {
  const int inner = p.rank - 1;
  const int64_t width = p.out_size[inner];
  // The innermost dim's segments, the same for every row that has a source row: [0, lo) fill,
  // [lo, lo + count) copied from input index `first`, [lo + count, width) fill.
  const int64_t before = p.before[inner];
  const int64_t lo = before < 0 ? 0 : (before > width ? width : before);
  const int64_t first = before < 0 ? -before : 0;
  int64_t count = p.in_size[inner] - first;
  if (count > width - lo) count = width - lo;
  if (count < 0) count = 0;
  const int64_t inner_stride = p.in_stride[inner];
  T value;
  std::memcpy(&value, &p.fill, sizeof(T));

  int64_t index[kPadMaxRank] = {};
  for (int64_t r = row_begin, d = inner - 1; d >= 0; --d) {
    index[d] = r % p.out_size[d];
    r /= p.out_size[d];
  }
  T* dst = reinterpret_cast<T*>(p.out) + row_begin * width;
  for (int64_t r = row_begin; r < row_end; ++r, dst += width) {
    bool inside = count > 0;
    int64_t offset = first * inner_stride;
    for (int d = 0; d < inner; ++d) {
      const int64_t s = index[d] - p.before[d];
      inside = inside && s >= 0 && s < p.in_size[d];
      offset += s * p.in_stride[d];
    }
    if (!inside) {
      fill(dst, width, value);
    } else {
      fill(dst, lo, value);
      const T* src = reinterpret_cast<const T*>(p.in) + offset;
      if (inner_stride == 1)
        std::memcpy(dst + lo, src, static_cast<size_t>(count) * sizeof(T));
      else
        gather(dst + lo, src, inner_stride, count);
      fill(dst + lo + count, width - lo - count, value);
    }
    for (int d = inner - 1; d >= 0; --d) {
      if (++index[d] < p.out_size[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace

void pad_rows(const PadPlan& plan, int64_t row_begin, int64_t row_end) {
  switch (plan.elem_size) {
    case 1: rows<uint8_t>(plan, row_begin, row_end); break;
    case 2: rows<uint16_t>(plan, row_begin, row_end); break;
    case 4: rows<uint32_t>(plan, row_begin, row_end); break;
    default: rows<uint64_t>(plan, row_begin, row_end); break;
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
