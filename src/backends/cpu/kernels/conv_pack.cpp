// conv's B packer, compiled once per ISA: the implicit im2col matrix of conv_pack.h's ConvGather, written
// straight into the GEMM's B panel layout (gemm.cpp's pack_panels / pack_pair_panels), so that conv runs on
// the packed GEMM's own blocks and register tile.
//
// A panel is gemm_nr() consecutive output positions; they split into runs that lie on one output row (same
// t and h), and along a run the input positions advance by the stride, so a panel row (one tap) is a few
// contiguous (stride 1) or strided copies, with zeros where the window reaches into the padding.
#include "backends/cpu/kernels/conv_pack.h"
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

// Panel columns [r0, r1) are the output positions (t, h, w0 + r - r0).
struct Run {
  int r0, r1;
  int64_t t, h, w0;
};

int runs_of(const ConvGather& g, int64_t p0, int count, Run* runs) {
  const int64_t w_size = g.out_size[2], h_size = g.out_size[1];
  int n = 0;
  for (int r = 0; r < count;) {
    const int64_t p = p0 + r, w = p % w_size, h = (p / w_size) % h_size, t = p / (w_size * h_size);
    const int len = static_cast<int>(count - r < w_size - w ? count - r : w_size - w);
    runs[n++] = {r, r + len, t, h, w};
    r += len;
  }
  return n;
}

// Reduction row q: its channel and kernel offsets, advanced in q order (the last kernel dim fastest).
struct Tap {
  int64_t c, k[kConvDims];
  Tap(const ConvGather& g, int64_t q) {
    for (int d = kConvDims - 1; d >= 0; --d) {
      k[d] = q % g.kernel[d];
      q /= g.kernel[d];
    }
    c = q;
  }
  void next(const ConvGather& g) {
    for (int d = kConvDims - 1; d >= 0; --d) {
      if (++k[d] < g.kernel[d]) return;
      k[d] = 0;
    }
    ++c;
  }
};

// Where row `tap` of a panel lies when it is R consecutive input elements (one run, inside the input, unit
// step): the common case, copied with fixed-length vector loops; null otherwise.
template <RowType T, int R>
const uint8_t* contiguous_row(const ConvGather& g, const Tap& tap, const Run* runs, int count) {
  if (count != 1 || runs[0].r1 != R || g.stride[2] * g.in_stride[2] != 1) return nullptr;
  const Run& run = runs[0];
  const int64_t it = run.t * g.stride[0] - g.padding[0] + tap.k[0] * g.dilation[0];
  const int64_t ih = run.h * g.stride[1] - g.padding[1] + tap.k[1] * g.dilation[1];
  const int64_t iw0 = run.w0 - g.padding[2] + tap.k[2] * g.dilation[2];
  if (it < 0 || it >= g.in_size[0] || ih < 0 || ih >= g.in_size[1] || iw0 < 0 || iw0 + R > g.in_size[2])
    return nullptr;
  const int64_t at = tap.c * g.c_stride + it * g.in_stride[0] + ih * g.in_stride[1] + iw0;
  return g.x + at * (T == RowType::f32 ? 4 : 2);
}

// Row `tap` of the panel whose columns are `runs`: R elements as f32 (E = float) or as their raw 16 bits
// (E = uint16_t, bf16 pairs), zero outside the input.
template <RowType T, class E, int R>
void gather_row(const ConvGather& g, const Tap& tap, const Run* runs, int count, E* row) {
  for (int r = 0; r < R; ++r) row[r] = E{};
  const uint8_t* channel = g.x + tap.c * g.c_stride * (T == RowType::f32 ? 4 : 2);
  for (int i = 0; i < count; ++i) {
    const Run& run = runs[i];
    const int64_t it = run.t * g.stride[0] - g.padding[0] + tap.k[0] * g.dilation[0];
    const int64_t ih = run.h * g.stride[1] - g.padding[1] + tap.k[1] * g.dilation[1];
    if (it < 0 || it >= g.in_size[0] || ih < 0 || ih >= g.in_size[1]) continue;
    const int64_t iw0 = run.w0 * g.stride[2] - g.padding[2] + tap.k[2] * g.dilation[2];
    const int64_t s = g.stride[2], len = run.r1 - run.r0;
    // Columns j of the run with 0 <= iw0 + j * s < in_size[2].
    int64_t lo = iw0 < 0 ? (-iw0 + s - 1) / s : 0;
    int64_t hi = iw0 >= g.in_size[2] ? 0 : (g.in_size[2] - iw0 + s - 1) / s;
    if (hi > len) hi = len;
    if (lo >= hi) continue;
    const int64_t base = it * g.in_stride[0] + ih * g.in_stride[1] + iw0 * g.in_stride[2];
    const int64_t step = s * g.in_stride[2];
    E* out = row + run.r0;
    // Unit steps whose bytes are already the panel's (bf16 bits, f32 values): one copy of the run's inside part.
    // These are most rows of a 3x3 conv on narrow tiles (every panel at a row's end reaches into the padding).
    if (step == 1 && (sizeof(E) == 2 || T == RowType::f32)) {
      std::memcpy(out + lo, reinterpret_cast<const E*>(channel) + base + lo, static_cast<size_t>(hi - lo) * sizeof(E));
    } else if constexpr (sizeof(E) == 2) {
      const uint16_t* src = reinterpret_cast<const uint16_t*>(channel) + base;
      for (int64_t j = lo; j < hi; ++j) out[j] = src[j * step];
    } else if (step == 1) {
      for (int64_t j = lo; j < hi; ++j) out[j] = load1<T>(channel, base + j);
    } else {
      for (int64_t j = lo; j < hi; ++j) out[j] = load1<T>(channel, base + j * step);
    }
  }
}

// The panels of a block, kPanelGroup at a time, each with its runs: the packers write them tap by tap across
// the group, so that one tap reads a long stretch of an input row in order (the hardware prefetcher follows
// it); panel by panel, each tap would touch a new cache line of a different row and wait for it.
constexpr int kPanelGroup = 16;

template <int R>
struct PanelGroup {
  int panels = 0;
  int count[kPanelGroup];
  Run runs[kPanelGroup][R];
  PanelGroup(const ConvGather& g, int64_t p0, int64_t end) {
    for (; panels < kPanelGroup && p0 < end; ++panels, p0 += R)
      count[panels] = runs_of(g, p0, static_cast<int>(end - p0 < R ? end - p0 : R), runs[panels]);
  }
};

// f32 panels: dst[(panel * kc + d) * R + r].
template <RowType T, int R>
void pack_f32(const ConvGather& g, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
  for (int64_t p0 = n0; p0 < n0 + nc; p0 += kPanelGroup * R, dst += kPanelGroup * kc * R) {
    const PanelGroup<R> group(g, p0, n0 + nc);
    Tap tap(g, k0);
    for (int64_t d = 0; d < kc; ++d, tap.next(g))
      for (int i = 0; i < group.panels; ++i) {
        float* row = dst + (i * kc + d) * R;
        if (const uint8_t* src = contiguous_row<T, R>(g, tap, group.runs[i], group.count[i]))
          for (int r = 0; r < R; r += kLanes) {
            const vf v = load<T>(src, r);
            std::memcpy(row + r, &v, sizeof v);
          }
        else
          gather_row<T, float, R>(g, tap, group.runs[i], group.count[i], row);
      }
  }
}

// Row `tap` of panel i as raw bf16 bits: in place when contiguous, else gathered into `scratch`.
template <int R>
const uint16_t* bf16_row(const ConvGather& g, const Tap& tap, const PanelGroup<R>& group, int i, uint16_t* scratch) {
  if (const uint8_t* src = contiguous_row<RowType::bf16, R>(g, tap, group.runs[i], group.count[i]))
    return reinterpret_cast<const uint16_t*>(src);
  gather_row<RowType::bf16, uint16_t, R>(g, tap, group.runs[i], group.count[i], scratch);
  return scratch;
}

// bf16 pair panels: dst[(panel * steps + s) * R + r] = row 2s | row 2s + 1 << 16, steps = ceil(kc / 2).
template <int R>
void pack_pairs(const ConvGather& g, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* out) {
  const int64_t steps = (kc + 1) / 2;
  uint32_t* dst = reinterpret_cast<uint32_t*>(out);
  alignas(64) uint16_t lo[R], hi[R], zeros[R] = {};
  for (int64_t p0 = n0; p0 < n0 + nc; p0 += kPanelGroup * R, dst += kPanelGroup * steps * R) {
    const PanelGroup<R> group(g, p0, n0 + nc);
    Tap even(g, k0), odd(g, k0 + 1);
    for (int64_t s = 0; s < steps; ++s) {
      for (int i = 0; i < group.panels; ++i) {
        const uint16_t* a = bf16_row<R>(g, even, group, i, lo);
        const uint16_t* b = 2 * s + 1 < kc ? bf16_row<R>(g, odd, group, i, hi) : zeros;
        // Explicit vectors: as a plain loop over pointers that may alias, GCC keeps it scalar.
        uint32_t* row = dst + (i * steps + s) * R;
        for (int r = 0; r < R; r += kLanes) {
          vh va, vb;
          std::memcpy(&va, a + r, sizeof va);
          std::memcpy(&vb, b + r, sizeof vb);
          const vu pair = __builtin_convertvector(va, vu) | __builtin_convertvector(vb, vu) << 16;
          std::memcpy(row + r, &pair, sizeof pair);
        }
      }
      even.next(g), even.next(g);
      odd.next(g), odd.next(g);
    }
  }
}

// The panel width is the GEMM's register tile width at this level (gemm_nr(): 2 vectors of f32).
template <class Fn>
void with_panel_width(Fn&& fn) {
  switch (gemm_nr()) {
    case 32: return fn.template operator()<32>();
    case 16: return fn.template operator()<16>();
    default: return fn.template operator()<8>();
  }
}

}  // namespace

void conv_pack_b(const void* gather, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
  const ConvGather& g = *static_cast<const ConvGather*>(gather);
  with_panel_width([&]<int R>() {
    with_type(g.type, [&]<RowType T>() { pack_f32<T, R>(g, k0, kc, n0, nc, dst); });
  });
}

void conv_pack_b_pairs(const void* gather, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
  const ConvGather& g = *static_cast<const ConvGather*>(gather);
  with_panel_width([&]<int R>() { pack_pairs<R>(g, k0, kc, n0, nc, dst); });
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
