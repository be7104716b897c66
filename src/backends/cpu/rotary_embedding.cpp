// Dedicated rotary_embedding: rows of the last dim in parallel (any outer strides, cos / sin broadcast by
// stride 0), each row rotated by kernels/rotary.cpp; out may be x.
#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernel_types.h"
#include "backends/cpu/kernels/rotary.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

using RotaryRowFn = void (*)(const RotaryRow&, RowType, int64_t, int64_t, bool);

bool unit_last(const Tensor& t) { return t.size(-1) <= 1 || t.stride(-1) == 1; }

// Walks the outer index of rows [begin, end) of a shape's leading dims, keeping each operand's element offset.
struct RowWalk {
  const Shape& shape;   // x's shape; the last dim is the row
  std::vector<int64_t> index;
  int64_t offset[4] = {0, 0, 0, 0};
  const Tensor* t[4];

  RowWalk(const RotaryArgs& a, int64_t row) : shape(a.x.shape()), index(a.x.dim(), 0), t{&a.x, &a.cos, &a.sin, &a.out} {
    for (int d = a.x.dim() - 2; d >= 0; --d) {
      index[d] = row % shape[d];
      row /= shape[d];
      for (int k = 0; k < 4; ++k) offset[k] += index[d] * t[k]->stride(d);
    }
  }
  void next() {
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
      for (int k = 0; k < 4; ++k) offset[k] += t[k]->stride(d);
      if (++index[d] < shape[d]) return;
      for (int k = 0; k < 4; ++k) offset[k] -= index[d] * t[k]->stride(d);
      index[d] = 0;
    }
  }
};

bool rotary_embedding_covers(const RotaryArgs& a) {
  const DType t = a.x.dtype();
  const bool same = a.cos.dtype() == t && a.sin.dtype() == t && a.out.dtype() == t;
  return (t == DType::f32 || t == DType::bf16 || t == DType::f16) && same && unit_last(a.x) && unit_last(a.out) &&
         unit_last(a.cos) && unit_last(a.sin);
}

void rotary_embedding(const RotaryArgs& a, RotaryRowFn row) {
  if (a.x.numel() == 0) return;
  const int64_t d = a.x.size(-1), half = a.cos.size(-1), rows = a.x.numel() / d;
  const RowType type = row_type(a.x.dtype(), "rotary_embedding", "x");
  const int64_t es = static_cast<int64_t>(dtype_size(a.x.dtype()));
  const bool interleaved = a.style == RotaryStyle::interleaved;
  auto ptr = [es](const Tensor& t, int64_t off) { return static_cast<uint8_t*>(t.data()) + off * es; };
  parallel_for(0, rows, std::max<int64_t>(1, 16384 / d), [&](int64_t begin, int64_t end) {
    RowWalk w(a, begin);
    for (int64_t r = begin; r < end; ++r, w.next()) {
      const RotaryRow plan{ptr(a.x, w.offset[0]), ptr(a.cos, w.offset[1]), ptr(a.sin, w.offset[2]),
                           ptr(a.out, w.offset[3])};
      row(plan, type, half, d, interleaved);
    }
  });
}

}  // namespace

#define ENTRIES(isa)                                                                                                  \
  t.rotary_embedding = {[](const RotaryArgs& a) { rotary_embedding(a, &isa::rotary_row); }, &rotary_embedding_covers};
FOURFOLD_CPU_KERNELS(rotary_embedding, ENTRIES)

}  // namespace fourfold::cpu
