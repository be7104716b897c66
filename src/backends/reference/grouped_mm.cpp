// Reference grouped_mm: one float64 product per group over its slice of rows, columns or K; nothing else written.
#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {
namespace {

// [start, end) of group g along the sliced extent.
struct Range { int64_t start, end; };
Range group_range(const Tensor& offs, int64_t g) {
  return {g == 0 ? 0 : static_cast<int64_t>(at(offs, g - 1)), static_cast<int64_t>(at(offs, g))};
}

}  // namespace

void grouped_mm(const GroupedMmArgs& args) {
  const Tensor &a = args.a, &b = args.b, &out = args.out;
  switch (args.kind) {
    case GroupedMmCase::a2d_b3d: {   // a [M_total, K], b [G, K, N]: rows of a sliced
      const int64_t k_size = a.size(1), n_size = b.size(2);
      for (int64_t g = 0; g < b.size(0); ++g) {
        const Range r = group_range(*args.offs, g);
        for (int64_t m = r.start; m < r.end; ++m)
          for (int64_t n = 0; n < n_size; ++n) {
            double acc = 0.0;
            for (int64_t k = 0; k < k_size; ++k) acc += at(a, m, k) * at(b, g, k, n);
            put(out, Index{m, n}, acc);
          }
      }
      return;
    }
    case GroupedMmCase::a3d_b2d: {   // a [G, M, K], b [K, N_total]: columns of b sliced
      const int64_t m_size = a.size(1), k_size = a.size(2);
      for (int64_t g = 0; g < a.size(0); ++g) {
        const Range r = group_range(*args.offs, g);
        for (int64_t m = 0; m < m_size; ++m)
          for (int64_t n = r.start; n < r.end; ++n) {
            double acc = 0.0;
            for (int64_t k = 0; k < k_size; ++k) acc += at(a, g, m, k) * at(b, k, n);
            put(out, Index{m, n}, acc);
          }
      }
      return;
    }
    case GroupedMmCase::a2d_b2d: {   // a [M, K_total], b [K_total, N]: K sliced; an empty group sums nothing
      const int64_t m_size = a.size(0), n_size = b.size(1);
      for (int64_t g = 0; g < args.offs->size(0); ++g) {
        const Range r = group_range(*args.offs, g);
        for (int64_t m = 0; m < m_size; ++m)
          for (int64_t n = 0; n < n_size; ++n) {
            double acc = 0.0;
            for (int64_t k = r.start; k < r.end; ++k) acc += at(a, m, k) * at(b, k, n);
            put(out, Index{g, m, n}, acc);
          }
      }
      return;
    }
    case GroupedMmCase::a3d_b3d: {   // a [G, M, K], b [G, K, N]: a batched product
      const int64_t m_size = a.size(1), k_size = a.size(2), n_size = b.size(2);
      for (int64_t g = 0; g < a.size(0); ++g)
        for (int64_t m = 0; m < m_size; ++m)
          for (int64_t n = 0; n < n_size; ++n) {
            double acc = 0.0;
            for (int64_t k = 0; k < k_size; ++k) acc += at(a, g, m, k) * at(b, g, k, n);
            put(out, Index{g, m, n}, acc);
          }
      return;
    }
  }
}

}  // namespace fourfold::ref
