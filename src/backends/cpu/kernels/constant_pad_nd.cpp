// constant_pad_nd rows, compiled once per ISA: each output row is fill, copy, fill, every element written once.
#include <cstring>

#include "backends/cpu/kernels/constant_pad_nd.h"

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

// The innermost dim's segments, the same for every row that has a source row: [0, lo) fill,
// [lo, lo + count) copied from input index `first`, [lo + count, width) fill.
struct Segments {
  int64_t width, lo, first, count;
};

Segments segments(const PadPlan& p) {
  const int inner = p.rank - 1;
  Segments g;
  g.width = p.out_size[inner];
  const int64_t before = p.before[inner];
  g.lo = before < 0 ? 0 : (before > g.width ? g.width : before);
  g.first = before < 0 ? -before : 0;
  g.count = p.in_size[inner] - g.first;
  if (g.count > g.width - g.lo) g.count = g.width - g.lo;
  if (g.count < 0) g.count = 0;
  return g;
}

// Rows [row_begin, row_end) in output order.
template <class T>
void rows(const PadPlan& p, int64_t row_begin, int64_t row_end) {
  const int inner = p.rank - 1;
  const Segments g = segments(p);
  const int64_t inner_stride = p.in_stride[inner];
  T value;
  std::memcpy(&value, &p.fill, sizeof(T));

  int64_t index[kPadMaxRank] = {};
  for (int64_t r = row_begin, d = inner - 1; d >= 0; --d) {
    index[d] = r % p.out_size[d];
    r /= p.out_size[d];
  }
  T* dst = reinterpret_cast<T*>(p.out) + row_begin * g.width;
  for (int64_t r = row_begin; r < row_end; ++r, dst += g.width) {
    bool inside = g.count > 0;
    int64_t offset = g.first * inner_stride;
    for (int d = 0; d < inner; ++d) {
      const int64_t s = index[d] - p.before[d];
      inside = inside && s >= 0 && s < p.in_size[d];
      offset += s * p.in_stride[d];
    }
    if (!inside) {
      fill(dst, g.width, value);
    } else {
      fill(dst, g.lo, value);
      const T* src = reinterpret_cast<const T*>(p.in) + offset;
      if (inner_stride == 1)
        std::memcpy(dst + g.lo, src, static_cast<size_t>(g.count) * sizeof(T));
      else
        gather(dst + g.lo, src, inner_stride, g.count);
      fill(dst + g.lo + g.count, g.width - g.lo - g.count, value);
    }
    for (int d = inner - 1; d >= 0; --d) {
      if (++index[d] < p.out_size[d]) break;
      index[d] = 0;
    }
  }
}

// Tiles [begin, end): a tile is up to kPadTileBytes / sizeof(T) consecutive rows along tile_dim (input stride 1)
// at one index of the other outer dims, the tile index varying fastest. Copying walks the row dim outside and
// the tile's rows inside, so each input line is read once and each output row is written sequentially.
template <class T>
void tiles(const PadPlan& p, int64_t begin, int64_t end) {
  const int inner = p.rank - 1, td = p.tile_dim;
  const Segments g = segments(p);
  const int64_t inner_stride = p.in_stride[inner];
  const int64_t tile = kPadTileBytes / static_cast<int64_t>(sizeof(T));
  const int64_t tsize = p.out_size[td];
  const int64_t blocks = (tsize + tile - 1) / tile;
  int64_t row_step = g.width;   // output elements between rows t and t + 1 along tile_dim
  for (int d = td + 1; d < inner; ++d) row_step *= p.out_size[d];
  T value;
  std::memcpy(&value, &p.fill, sizeof(T));

  for (int64_t item = begin; item < end; ++item) {
    int64_t rest = item;
    const int64_t block = rest % blocks;
    rest /= blocks;
    int64_t index[kPadMaxRank] = {};
    for (int d = inner - 1; d >= 0; --d) {
      if (d == td) continue;
      index[d] = rest % p.out_size[d];
      rest /= p.out_size[d];
    }
    const int64_t t0 = block * tile, t1 = t0 + tile < tsize ? t0 + tile : tsize;
    index[td] = t0;
    bool inside = g.count > 0;
    int64_t offset = g.first * inner_stride, row = 0;
    for (int d = 0; d < inner; ++d) {
      row = row * p.out_size[d] + index[d];
      if (d == td) continue;
      const int64_t s = index[d] - p.before[d];
      inside = inside && s >= 0 && s < p.in_size[d];
      offset += s * p.in_stride[d];
    }
    // Rows [ta, tb) of the tile have a source row.
    int64_t ta = t0 > p.before[td] ? t0 : p.before[td];
    int64_t tb = t1 < p.before[td] + p.in_size[td] ? t1 : p.before[td] + p.in_size[td];
    if (!inside || tb < ta) tb = ta = t0;
    T* dst0 = reinterpret_cast<T*>(p.out) + row * g.width;
    for (int64_t t = t0; t < t1; ++t) {
      T* dst = dst0 + (t - t0) * row_step;
      if (t < ta || t >= tb) {
        fill(dst, g.width, value);
      } else {
        fill(dst, g.lo, value);
        fill(dst + g.lo + g.count, g.width - g.lo - g.count, value);
      }
    }
    if (tb == ta) continue;
    const T* src = reinterpret_cast<const T*>(p.in) + offset + (ta - p.before[td]);
    T* dst = dst0 + (ta - t0) * row_step + g.lo;
    const int64_t m = tb - ta;
    for (int64_t j = 0; j < m; ++j) gather(dst + j * row_step, src + j, inner_stride, g.count);
  }
}

template <class T>
void work(const PadPlan& p, int64_t begin, int64_t end) {
  if (p.tile_dim >= 0)
    tiles<T>(p, begin, end);
  else
    rows<T>(p, begin, end);
}

}  // namespace

void pad_rows(const PadPlan& plan, int64_t row_begin, int64_t row_end) {
  switch (plan.elem_size) {
    case 1: work<uint8_t>(plan, row_begin, row_end); break;
    case 2: work<uint16_t>(plan, row_begin, row_end); break;
    case 4: work<uint32_t>(plan, row_begin, row_end); break;
    default: work<uint64_t>(plan, row_begin, row_end); break;
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
