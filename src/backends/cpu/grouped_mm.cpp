// Dedicated grouped_mm: every group's product described as one GEMM over K-contiguous rows of A and of B^T,
// cut into tiles, and all groups' tiles scheduled in one parallel region balanced by cost (uneven and empty
// groups included). Groups of a few rows (MoE decode) run the decode GEMV's row loops, which stream each weight
// row once; an empty group has no tiles, so an idle expert's weights are never read.
#include <algorithm>
#include <vector>

#include "backends/cpu/balanced.h"
#include "backends/cpu/cpu_ops.h"
#include "fourfold/dtype.h"

namespace fourfold::cpu {
namespace {

constexpr int64_t kTileRows = 64;
constexpr int64_t kTileCols = 32;
constexpr int64_t kGemvTileRows = 64;   // weight rows per GEMV work item (a 2048-wide bf16 row: 256 KiB a tile)

MatType mat_type(DType t) { return t == DType::f32 ? MatType::f32 : MatType::bf16; }

// The k dim of a K-contiguous operand: stride 1, or too short for the stride to matter.
bool k_contiguous(const Tensor& t, int dim) { return t.size(dim) <= 1 || t.stride(dim) == 1; }

// One group as out[m, n] = sum_k a[m, k] * bt[n, k]; strides in elements.
struct Gemm {
  const uint8_t* a;
  int64_t lda;
  const uint8_t* b;
  int64_t ldb;
  uint8_t* out;
  int64_t o_rs, o_cs;
  int64_t m, n, k;
};

std::vector<Gemm> groups_of(const GroupedMmArgs& args) {
  const Tensor &a = args.a, &b = args.b, &o = args.out;
  const auto* ap = static_cast<const uint8_t*>(a.data());
  const auto* bp = static_cast<const uint8_t*>(b.data());
  auto* op = static_cast<uint8_t*>(o.data());
  const int64_t es = static_cast<int64_t>(dtype_size(a.dtype())), eo = static_cast<int64_t>(dtype_size(o.dtype()));
  std::vector<int64_t> ends;
  if (args.offs != nullptr)
    for (double v : args.offs->to_vector()) ends.push_back(static_cast<int64_t>(v));
  const int64_t count = args.kind == GroupedMmCase::a3d_b3d ? a.size(0) : static_cast<int64_t>(ends.size());
  std::vector<Gemm> gemms;
  int64_t s = 0;
  for (int64_t g = 0; g < count; ++g) {
    const int64_t e = ends.empty() ? 0 : ends[static_cast<size_t>(g)], len = e - s;
    switch (args.kind) {
      case GroupedMmCase::a2d_b3d:
        gemms.push_back({ap + s * a.stride(0) * es, a.stride(0), bp + g * b.stride(0) * es, b.stride(2),
                         op + s * o.stride(0) * eo, o.stride(0), o.stride(1), len, b.size(2), a.size(1)});
        break;
      case GroupedMmCase::a3d_b2d:
        gemms.push_back({ap + g * a.stride(0) * es, a.stride(1), bp + s * b.stride(1) * es, b.stride(1),
                         op + s * o.stride(1) * eo, o.stride(0), o.stride(1), a.size(1), len, a.size(2)});
        break;
      case GroupedMmCase::a2d_b2d:
        gemms.push_back({ap + s * a.stride(1) * es, a.stride(0), bp + s * b.stride(0) * es, b.stride(1),
                         op + g * o.stride(0) * eo, o.stride(1), o.stride(2), a.size(0), b.size(1), len});
        break;
      case GroupedMmCase::a3d_b3d:
        gemms.push_back({ap + g * a.stride(0) * es, a.stride(1), bp + g * b.stride(0) * es, b.stride(2),
                         op + g * o.stride(0) * eo, o.stride(1), o.stride(2), a.size(1), b.size(2), a.size(2)});
        break;
    }
    s = e;
  }
  return gemms;
}

struct Tile {
  int32_t group;
  int64_t m0, n0;
};

}  // namespace

void store_tile(const float* tile, int64_t ldt, int64_t rows, int64_t cols, uint8_t* out, int64_t o_rs, int64_t o_cs,
                DType dtype) {
  const int64_t eo = static_cast<int64_t>(dtype_size(dtype));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      uint8_t* dst = out + (r * o_rs + c * o_cs) * eo;
      const float v = tile[r * ldt + c];
      if (dtype == DType::f32) {
        *reinterpret_cast<float*>(dst) = v;
      } else {
        *reinterpret_cast<uint16_t*>(dst) = f32_to_bf16(v);
      }
    }
}

bool grouped_mm_covers(const GroupedMmArgs& a) {
  const DType t = a.a.dtype();
  if ((t != DType::f32 && t != DType::bf16) || a.b.dtype() != t) return false;
  if (a.out.dtype() != DType::f32 && a.out.dtype() != DType::bf16) return false;
  switch (a.kind) {
    case GroupedMmCase::a2d_b3d: return k_contiguous(a.a, 1) && k_contiguous(a.b, 1);
    case GroupedMmCase::a3d_b2d: return k_contiguous(a.a, 2) && k_contiguous(a.b, 0);
    case GroupedMmCase::a2d_b2d: return k_contiguous(a.a, 1) && k_contiguous(a.b, 0);
    case GroupedMmCase::a3d_b3d: return k_contiguous(a.a, 2) && k_contiguous(a.b, 1);
  }
  return false;
}

void grouped_mm(const GroupedMmArgs& args, DotTileFn dot, GemvRowsFn gemv) {
  const std::vector<Gemm> gemms = groups_of(args);
  std::vector<Tile> tiles;
  std::vector<double> cost;
  // MoE decode (a 2-D a, few rows per expert): those groups run the GEMV's row loops on a's rows widened to
  // f32 once, kGemvTileRows weight rows per work item; a tile with m0 = -1 is one of these.
  const bool gemv_groups = args.kind == GroupedMmCase::a2d_b3d;
  const Tensor a32 = gemv_groups ? activations_f32(args.a) : Tensor();
  const DType out_type = args.out.dtype();
  std::vector<GemvPlan> plans(gemms.size());
  int64_t row0 = 0;
  for (size_t g = 0; g < gemms.size(); ++g) {
    const Gemm& p = gemms[g];
    if (gemv_groups && p.m > 0 && p.m <= kGemvMaxM && p.k > 0) {
      GemvPlan& plan = plans[g];
      plan.m = p.m, plan.n = p.n, plan.k = p.k;
      plan.x = a32.data_as<const float>() + row0 * p.k;
      plan.w = p.b;
      plan.w_row_bytes = p.ldb * static_cast<int64_t>(dtype_size(args.b.dtype()));
      plan.w_type = args.b.dtype() == DType::f32 ? GemvWeight::f32 : GemvWeight::bf16;
      plan.out = p.out;
      plan.out_type = row_type(out_type);
      plan.out_m_stride = p.o_rs, plan.out_n_stride = p.o_cs;
      for (int64_t n0 = 0; n0 < p.n; n0 += kGemvTileRows) {
        tiles.push_back({static_cast<int32_t>(g), -1, n0});
        cost.push_back(static_cast<double>(std::min(kGemvTileRows, p.n - n0)) * static_cast<double>(p.k + 1) * (p.m + 2));
      }
      row0 += p.m;
      continue;
    }
    row0 += p.m;
    for (int64_t m0 = 0; m0 < p.m; m0 += kTileRows)
      for (int64_t n0 = 0; n0 < p.n; n0 += kTileCols) {
        tiles.push_back({static_cast<int32_t>(g), m0, n0});
        // Each weight row is streamed once per tile (about two rows' worth of work), then reused by every row.
        const double rows = static_cast<double>(std::min(kTileRows, p.m - m0));
        cost.push_back(static_cast<double>(std::min(kTileCols, p.n - n0)) * static_cast<double>(p.k + 1) * (rows + 2));
      }
  }
  const MatType type = mat_type(args.a.dtype());
  const int64_t es = static_cast<int64_t>(dtype_size(args.a.dtype()));
  run_balanced(cost, [&](int64_t i) {
    const Tile& t = tiles[static_cast<size_t>(i)];
    const Gemm& p = gemms[static_cast<size_t>(t.group)];
    if (t.m0 < 0) {
      gemv(plans[static_cast<size_t>(t.group)], t.n0, std::min(p.n, t.n0 + kGemvTileRows));
      return;
    }
    const int64_t rows = std::min(kTileRows, p.m - t.m0), cols = std::min(kTileCols, p.n - t.n0);
    uint8_t* out = p.out + (t.m0 * p.o_rs + t.n0 * p.o_cs) * static_cast<int64_t>(dtype_size(out_type));
    const bool direct = out_type == DType::f32 && p.o_cs == 1;
    float buffer[kTileRows * kTileCols];
    dot(DotTile{p.a + t.m0 * p.lda * es, nullptr, p.lda, type, p.b + t.n0 * p.ldb * es, p.ldb, type, rows, cols, p.k,
                direct ? reinterpret_cast<float*>(out) : buffer, direct ? p.o_rs : kTileCols});
    if (!direct) store_tile(buffer, kTileCols, rows, cols, out, p.o_rs, p.o_cs, out_type);
  });
}

}  // namespace fourfold::cpu
