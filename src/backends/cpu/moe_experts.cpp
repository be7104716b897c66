// Dedicated moe_experts in two parallel regions (one barrier between them):
//  1. gate and up: tiles of (expert, rows, 32 intermediate columns) over every expert with rows, balanced by
//     cost; each tile reads the gathered x rows in place (row addresses, no copy), computes its gate and up
//     columns and writes h = silu(gate) * up into an f32 [A, I] scratch.
//  2. down and the scatter-add: tiles of 32 output columns, each owning those columns of every token, so
//     the routing-weighted sum over a token's experts needs no atomics; each tile walks the experts with rows,
//     then writes its columns of the output once.
// Each active expert's weights are read once (decode: a grouped GEMV); idle experts are never touched.
// fp8 (e4m3fn) experts are read as they are stored: each 128-wide K block's sum times its block scale.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/balanced.h"
#include "backends/cpu/cpu_ops.h"
#include "fourfold/dtype.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

constexpr int64_t kRows = 64;
constexpr int64_t kCols = 32;

MatType mat_type(DType t) { return t == DType::f32 ? MatType::f32 : t == DType::bf16 ? MatType::bf16 : MatType::e4m3; }
bool last_contiguous(const Tensor& t) { return t.size(-1) <= 1 || t.stride(-1) == 1; }

// One expert weight: x's dtype, or e4m3 with its block scale's last dim contiguous.
bool weight_ok(const Tensor& w, const Tensor* scale, DType x) {
  if (!last_contiguous(w)) return false;
  if (w.dtype() == DType::f8_e4m3fn) return scale != nullptr && last_contiguous(*scale);
  return w.dtype() == x || (x == DType::f32 && w.dtype() == DType::bf16);   // bf16 storage under f32 x
}

// A DotTile's B for rows [row0, ...) of expert e of weight w (and its scales, for fp8).
DotTile weight_rows(DotTile t, const Tensor& w, const Tensor* scale, int64_t e, int64_t row0) {
  t.b = static_cast<const uint8_t*>(w.data()) +
        (e * w.stride(0) + row0 * w.stride(1)) * static_cast<int64_t>(dtype_size(w.dtype()));
  t.ldb = w.stride(1);
  t.b_type = mat_type(w.dtype());
  if (scale != nullptr) {
    t.b_scale = scale->data_as<float>() + e * scale->stride(0);
    t.scale_ld = scale->stride(1);
    t.b_row0 = row0;
  }
  return t;
}

struct UpTile {
  int64_t expert, r0, rows, i0;
};

}  // namespace

bool moe_experts_covers(const MoeExpertsArgs& a) {
  const DType t = a.x.dtype();
  return (t == DType::f32 || t == DType::bf16) && weight_ok(a.gate, a.gate_scale, t) && weight_ok(a.up, a.up_scale, t) &&
         weight_ok(a.down, a.down_scale, t) && last_contiguous(a.x) && a.out.is_contiguous();
}

void moe_experts(const MoeExpertsArgs& a, DotTileFn dot) {
  const int64_t tokens = a.x.size(0), hidden = a.x.size(1), inter = a.gate.size(1), experts = a.gate.size(0);
  if (tokens == 0 || hidden == 0) return;
  const DType dtype = a.x.dtype();
  const MatType type = mat_type(dtype);
  const int64_t es = static_cast<int64_t>(dtype_size(dtype));
  std::vector<int64_t> start(static_cast<size_t>(experts + 1), 0);
  {
    const std::vector<double> ends = a.offs.to_vector();
    for (int64_t e = 0; e < experts; ++e) start[static_cast<size_t>(e + 1)] = static_cast<int64_t>(ends[static_cast<size_t>(e)]);
  }
  const int64_t total = start.back();
  std::vector<int32_t> token(static_cast<size_t>(total));
  std::vector<float> weight(static_cast<size_t>(total));
  std::vector<const void*> x_rows(static_cast<size_t>(total));
  {
    const std::vector<double> t = a.token_of_row.to_vector(), w = a.row_weight.to_vector();
    const auto* x = static_cast<const uint8_t*>(a.x.data());
    for (int64_t r = 0; r < total; ++r) {
      token[static_cast<size_t>(r)] = static_cast<int32_t>(t[static_cast<size_t>(r)]);
      weight[static_cast<size_t>(r)] = static_cast<float>(w[static_cast<size_t>(r)]);
      x_rows[static_cast<size_t>(r)] = x + token[static_cast<size_t>(r)] * a.x.stride(0) * es;
    }
  }

  // 1. h = silu(x gate^T) * (x up^T) per row, [total, inter] f32.
  Tensor h_tensor = Tensor::empty({std::max<int64_t>(total, 1), std::max<int64_t>(inter, 1)}, DType::f32);
  float* h = h_tensor.data_as<float>();
  std::vector<UpTile> tiles;
  std::vector<double> cost;
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t s = start[static_cast<size_t>(e)], n = start[static_cast<size_t>(e + 1)] - s;
    for (int64_t r0 = 0; r0 < n; r0 += kRows)
      for (int64_t i0 = 0; i0 < inter; i0 += kCols) {
        const int64_t rows = std::min(kRows, n - r0);
        tiles.push_back({e, s + r0, rows, i0});
        cost.push_back(static_cast<double>(std::min(kCols, inter - i0)) * static_cast<double>(hidden + 1) *
                       static_cast<double>(rows + 2));
      }
  }
  run_balanced(cost, [&](int64_t i) {
    const UpTile& t = tiles[static_cast<size_t>(i)];
    const int64_t cols = std::min(kCols, inter - t.i0);
    float up[kRows * kCols];
    float* gate = h + t.r0 * inter + t.i0;
    const DotTile rows{nullptr, x_rows.data() + t.r0, 0, type, nullptr, 0, type, t.rows, cols, hidden, nullptr, 0};
    DotTile g = weight_rows(rows, a.gate, a.gate_scale, t.expert, t.i0);
    g.out = gate;
    g.ldo = inter;
    dot(g);
    DotTile u = weight_rows(rows, a.up, a.up_scale, t.expert, t.i0);
    u.out = up;
    u.ldo = kCols;
    dot(u);
    for (int64_t r = 0; r < t.rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const float g = gate[r * inter + c];
        gate[r * inter + c] = g / (1.0f + std::exp(-g)) * up[r * kCols + c];
      }
  });

  // 2. out[t, cols] = sum over t's rows of weight * (h down^T)[row, cols], one column tile per work item.
  auto* out = static_cast<uint8_t*>(a.out.data());
  const int64_t col_tiles = (hidden + kCols - 1) / kCols;
  parallel_for(0, col_tiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> acc(static_cast<size_t>(tokens * kCols));
    float y[kRows * kCols];
    for (int64_t ct = begin; ct < end; ++ct) {
      const int64_t o0 = ct * kCols, cols = std::min(kCols, hidden - o0);
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t e = 0; e < experts; ++e) {
        const int64_t s = start[static_cast<size_t>(e)], n = start[static_cast<size_t>(e + 1)] - s;
        for (int64_t r0 = 0; r0 < n; r0 += kRows) {
          const int64_t rows = std::min(kRows, n - r0);
          const DotTile hrows{h + (s + r0) * inter, nullptr, inter, MatType::f32, nullptr, 0, type, rows, cols, inter,
                              y, kCols};
          dot(weight_rows(hrows, a.down, a.down_scale, e, o0));
          for (int64_t r = 0; r < rows; ++r) {
            const float w = weight[static_cast<size_t>(s + r0 + r)];
            float* dst = acc.data() + token[static_cast<size_t>(s + r0 + r)] * kCols;
            for (int64_t c = 0; c < cols; ++c) dst[c] += w * y[r * kCols + c];
          }
        }
      }
      store_tile(acc.data(), kCols, tokens, cols, out + o0 * es, hidden, 1, dtype);
    }
  });
}

}  // namespace fourfold::cpu
