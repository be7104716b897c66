// rotary_embedding rows, compiled once per ISA. Every pair is loaded before either of its elements is stored,
// so out may be x (the in-place rotary_embedding_). half_split pairs (i, i + half) are two plain vector
// streams; interleaved pairs (2i, 2i + 1) are two x vectors against one cos / sin vector whose lanes are
// duplicated by a shuffle, the partner lane swapped in by another.
#include "backends/cpu/kernels/rotary.h"
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

// Lane j of the result is lane mask[j] of v.
inline vf permute(vf v, vi mask) { return __builtin_shuffle(v, mask); }

struct Masks {
  vi dup_lo, dup_hi, swap;
  vf sign;   // -1 on the first lane of each pair: (a, b) -> (a c - b s, b c + a s)
  Masks() {
    for (int j = 0; j < kLanes; ++j) {
      dup_lo[j] = j / 2;
      dup_hi[j] = kLanes / 2 + j / 2;
      swap[j] = j ^ 1;
      sign[j] = j % 2 == 0 ? -1.0f : 1.0f;
    }
  }
};

template <RowType T>
void half_split(const RotaryRow& r, int64_t half) {
  const int64_t second = half;
  int64_t i = 0;
  for (; i + kLanes <= half; i += kLanes) {
    const vf a = load<T>(r.x, i), b = load<T>(r.x, second + i), c = load<T>(r.cos, i), s = load<T>(r.sin, i);
    store<T>(r.out, i, a * c - b * s);
    store<T>(r.out, second + i, b * c + a * s);
  }
  if (i < half) {
    const int64_t n = half - i;
    const vf a = load_tail<T>(r.x, i, n, 0.0f), b = load_tail<T>(r.x, second + i, n, 0.0f);
    const vf c = load_tail<T>(r.cos, i, n, 0.0f), s = load_tail<T>(r.sin, i, n, 0.0f);
    store_tail<T>(r.out, i, n, a * c - b * s);
    store_tail<T>(r.out, second + i, n, b * c + a * s);
  }
}

template <RowType T>
void interleaved(const RotaryRow& r, int64_t half) {
  static const Masks m;
  int64_t p = 0;   // pair index: x elements [2p, 2p + 2 kLanes) against cos / sin [p, p + kLanes)
  for (; p + kLanes <= half; p += kLanes) {
    const vf c = load<T>(r.cos, p), s = load<T>(r.sin, p);
    for (int k = 0; k < 2; ++k) {
      const vi dup = k == 0 ? m.dup_lo : m.dup_hi;
      const vf x = load<T>(r.x, 2 * p + k * kLanes);
      store<T>(r.out, 2 * p + k * kLanes, x * permute(c, dup) + permute(x, m.swap) * permute(s, dup) * m.sign);
    }
  }
  for (; p < half; ++p) {
    const float a = load1<T>(r.x, 2 * p), b = load1<T>(r.x, 2 * p + 1);
    const float c = load1<T>(r.cos, p), s = load1<T>(r.sin, p);
    store1<T>(r.out, 2 * p, a * c - b * s);
    store1<T>(r.out, 2 * p + 1, b * c + a * s);
  }
}

}  // namespace

void rotary_row(const RotaryRow& r, RowType type, int64_t half, int64_t d, bool inter) {
  with_type(type, [&]<RowType T>() { inter ? interleaved<T>(r, half) : half_split<T>(r, half); });
  if (r.out != r.x && d > 2 * half) {
    const int64_t es = type == RowType::f32 ? 4 : 2;
    std::memmove(static_cast<uint8_t*>(r.out) + 2 * half * es, static_cast<const uint8_t*>(r.x) + 2 * half * es,
                 static_cast<size_t>((d - 2 * half) * es));
  }
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
