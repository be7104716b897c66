// Dedicated topk, argmax and embedding. topk and argmax over contiguous last-dim rows of f32 / bf16 / f16: the decode step's router choice
// (top 8 of 128 expert probabilities) and greedy sampling (argmax of a 151,936-wide logits row), which ran on the
// float64 reference tier. Same order as the reference (ref_order.h): NaN above every number, -0 equal to +0,
// ties to the lower index. Rows are independent, so any split over threads gives the same answer.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/cpu_registration.h"
#include "fourfold/dtype.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

bool float_row_type(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

// A row widened to f32 (exact for all three dtypes).
void widen(const void* row, DType t, int64_t n, float* out) {
  if (t == DType::f32) {
    std::memcpy(out, row, static_cast<size_t>(n) * sizeof(float));
  } else if (t == DType::bf16) {
    const auto* p = static_cast<const uint16_t*>(row);
    for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_f32(p[i]);
  } else {
    const auto* p = static_cast<const uint16_t*>(row);
    for (int64_t i = 0; i < n; ++i) out[i] = f16_to_f32(p[i]);
  }
}

// a ranks above b (largest first): NaN above all, then by value; equal values are not above each other.
inline bool above(float a, float b) { return std::isnan(a) ? !std::isnan(b) : (!std::isnan(b) && a > b); }

// The largest value of a block (16 independent maxss chains: GCC 12 keeps the IEEE max scalar) and whether it
// holds a NaN (a vectorized or), two passes over the block in L1, so that argmax looks for an index only in a
// block that raises its best: the element-by-element comparison with the running best is one serial chain of
// compares and branches, far below the read bandwidth (docs/decode.md step 28).
struct BlockMax {
  float value;
  bool nan;
};

BlockMax block_max(const float* v, int64_t m) {
  constexpr int kLanes = 16;
  float lane[kLanes];
  int32_t lane_nan[kLanes] = {};   // (kept apart from the floats: a bool beside them stopped the vectorizer)
  std::fill(lane, lane + kLanes, -std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= m; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] = v[i + j] > lane[j] ? v[i + j] : lane[j];   // a NaN never enters
  for (int64_t k = 0; k + kLanes <= m; k += kLanes)
    for (int j = 0; j < kLanes; ++j) lane_nan[j] |= v[k + j] != v[k + j] ? 1 : 0;
  for (; i < m; ++i) {
    lane_nan[0] |= v[i] != v[i] ? 1 : 0;
    lane[0] = v[i] > lane[0] ? v[i] : lane[0];
  }
  BlockMax out{lane[0], lane_nan[0] != 0};
  for (int j = 1; j < kLanes; ++j) {
    out.value = lane[j] > out.value ? lane[j] : out.value;
    out.nan = out.nan || lane_nan[j] != 0;
  }
  return out;
}

bool topk_covers(const TopkArgs& a) {
  return float_row_type(a.x.dtype()) && a.x.dim() >= 1 && a.dim == a.x.dim() - 1 && a.x.is_contiguous() &&
         a.values.is_contiguous() && a.indices.is_contiguous() && a.values.dtype() == a.x.dtype();
}

void topk(const TopkArgs& a) {
  const int64_t n = a.x.size(-1), k = a.k, rows = n == 0 ? 0 : a.x.numel() / n;
  if (k == 0 || rows == 0) return;
  const size_t es = dtype_size(a.x.dtype());
  const auto* x = static_cast<const uint8_t*>(a.x.data());
  auto* values = static_cast<uint8_t*>(a.values.data());
  auto* indices = a.indices.data_as<int64_t>();
  parallel_for(0, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(n));
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      widen(x + r * n * es, a.x.dtype(), n, row.data());
      for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
      // A strict total order (value, then index): partial_sort then gives exactly the reference's stable sort.
      const auto first = [&](int64_t i, int64_t j) {
        const float u = row[static_cast<size_t>(i)], v = row[static_cast<size_t>(j)];
        const bool ij = a.largest ? above(u, v) : above(v, u), ji = a.largest ? above(v, u) : above(u, v);
        return ij || (!ji && i < j);
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), first);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t i = order[static_cast<size_t>(j)];
        std::memcpy(values + (r * k + j) * es, x + (r * n + i) * es, es);
        indices[r * k + j] = i;
      }
    }
  });
}

bool argmax_covers(const ArgmaxArgs& a) {
  return float_row_type(a.x.dtype()) && a.x.dim() >= 1 && a.dim == a.x.dim() - 1 && a.x.is_contiguous() &&
         a.out.is_contiguous() && a.x.size(-1) > 0;
}

void argmax(const ArgmaxArgs& a) {
  const int64_t n = a.x.size(-1), rows = a.x.numel() / n;
  const size_t es = dtype_size(a.x.dtype());
  const auto* x = static_cast<const uint8_t*>(a.x.data());
  auto* out = a.out.data_as<int64_t>();
  parallel_for(0, rows, std::max<int64_t>(1, 65536 / n), [&](int64_t begin, int64_t end) {
    constexpr int64_t kBlock = 4096;   // widened a block at a time: the row never leaves the cache twice
    float block[kBlock];
    for (int64_t r = begin; r < end; ++r) {
      float best = 0;
      int64_t best_index = -1;
      for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
        const int64_t m = std::min(kBlock, n - b0);
        // f32 rows are read where they lie; bf16 and f16 blocks widened first.
        const float* v = reinterpret_cast<const float*>(x + (r * n + b0) * es);
        if (a.x.dtype() != DType::f32) {
          widen(x + (r * n + b0) * es, a.x.dtype(), m, block);
          v = block;
        }
        const BlockMax bm = block_max(v, m);
        if (bm.nan) {   // the block's first NaN: nothing ranks above it
          best_index = b0 + (std::find_if(v, v + m, [](float e) { return std::isnan(e); }) - v);
          break;
        }
        if (best_index < 0 || bm.value > best) {   // the block's first element of that value (-0 equals +0)
          const int64_t i = std::find(v, v + m, bm.value) - v;
          best = v[i];
          best_index = b0 + i;
        }
      }
      out[r] = best_index;
    }
  });
}

bool embedding_covers(const EmbeddingArgs& a) {
  return a.weight.dim() == 2 && a.weight.stride(1) == 1 && a.out.is_contiguous() && a.out.dtype() == a.weight.dtype() &&
         a.indices.is_contiguous() && (a.indices.dtype() == DType::i64 || a.indices.dtype() == DType::i32);
}

// One row copy per index (the ops layer validated the indices).
void embedding(const EmbeddingArgs& a) {
  const int64_t t = a.indices.numel(), d = a.weight.size(1);
  const size_t row_bytes = static_cast<size_t>(d) * dtype_size(a.weight.dtype());
  const size_t stride = static_cast<size_t>(a.weight.stride(0)) * dtype_size(a.weight.dtype());
  const auto* w = static_cast<const uint8_t*>(a.weight.data());
  auto* out = static_cast<uint8_t*>(a.out.data());
  const bool wide = a.indices.dtype() == DType::i64;
  parallel_for(0, t, std::max<int64_t>(1, int64_t(65536) / std::max<int64_t>(static_cast<int64_t>(row_bytes), 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t i = begin; i < end; ++i) {
                   const int64_t index = wide ? a.indices.data_as<int64_t>()[i] : a.indices.data_as<int32_t>()[i];
                   std::memcpy(out + static_cast<size_t>(i) * row_bytes, w + static_cast<size_t>(index) * stride, row_bytes);
                 }
               });
}

}  // namespace

#define ENTRIES(isa)                            \
  t.topk = {&topk, &topk_covers};               \
  t.argmax = {&argmax, &argmax_covers};         \
  t.embedding = {&embedding, &embedding_covers};
FOURFOLD_CPU_KERNELS(select, ENTRIES)

}  // namespace fourfold::cpu
