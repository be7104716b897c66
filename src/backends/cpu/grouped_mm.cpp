// Dedicated grouped_mm: every group's product described as one GEMM over K-contiguous rows of A and of B^T,
// cut into tiles, and all groups' tiles scheduled in one parallel region balanced by cost (uneven and empty
// groups included). Each tile takes the loop that suits its group's row count:
//   a 2-D a, at most kStreamMaxRows rows (MoE decode): the decode GEMV's row loops, which stream each weight row once;
//   more rows (prefill): the packed GEMM's tile (gemm.h), each weight block packed once per tile and reused by
//     every row of it (vdpbf16ps on bf16 pairs at the AVX512-BF16 level);
//   a 3-D a with few rows: dot tiles.
// An empty group has no tiles, so an idle expert's weights are never read.
#include <algorithm>
#include <vector>

#include "backends/cpu/balanced.h"
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/cpu_registration.h"
#include "fourfold/dtype.h"

namespace fourfold::cpu {
namespace {

// Groups of at most this many rows stream the weight (GEMV, dot tiles); larger ones take GEMM tiles. At one or
// two rows packing a weight for the GEMM is not repaid; by eight the multiply dominates, and the GEMM's
// vdpbf16ps on packed pairs does two products per lane where the GEMV's f32 FMAs do one (docs/decode.md).
constexpr int64_t kStreamMaxRows = 4;
constexpr int64_t kDotTileRows = 64;
constexpr int64_t kDotTileCols = 32;
constexpr int64_t kGemvTileRows = 64;    // weight rows per GEMV work item (a 2048-wide bf16 row: 256 KiB a tile)
constexpr int64_t kGemmTileRows = 288;   // two of the GEMM's row blocks: the packed weight block is reused twice
constexpr int64_t kGemmTileCols = 256;   // the packed weight block (256 x 512 f32) stays in L2


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

enum class Loop : uint8_t { gemv, gemm, dot };

struct Tile {
  Loop loop;
  int32_t group;
  int64_t m0, m1, n0, n1;
};

// The group as the packed GEMM's problem: a [m, k] rows as they lie, B = bt^T [k, n] (element (k, n) at
// bt + n * ldb + k), out any strides.
GemmProblem gemm_problem(const Gemm& p, RowType in, RowType out) {
  return {p.m, p.n, p.k, {p.a, in, p.lda, 1}, {p.b, in, 1, p.ldb}, {p.out, out, p.o_rs, p.o_cs, nullptr, RowType::f32, 0}};
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

void grouped_mm(const GroupedMmArgs& args, const GroupedPieces& pieces) {
  const std::vector<Gemm> gemms = groups_of(args);
  const bool two_d_a = args.kind == GroupedMmCase::a2d_b3d;
  const RowType in_type = row_type(args.a.dtype(), "grouped_mm", "a"), out_type = row_type(args.out.dtype(), "grouped_mm", "out");
  // Costs in multiply-adds, a streamed weight element counted as ten (about the ratio of the GEMM's rate to
  // the read bandwidth's, per thread, for bf16 on Zen 4) and a packed one as four more rows of work.
  std::vector<Tile> tiles;
  std::vector<double> cost;
  bool any_gemv = false;
  for (size_t g = 0; g < gemms.size(); ++g) {
    const Gemm& p = gemms[g];
    const auto add = [&](Loop loop, int64_t m0, int64_t m1, int64_t n0, int64_t n1, double c) {
      tiles.push_back({loop, static_cast<int32_t>(g), m0, m1, n0, n1});
      cost.push_back(c);
    };
    const double k = static_cast<double>(p.k + 1);
    if (p.m <= 0 || p.n <= 0) continue;
    if (p.m > kStreamMaxRows) {
      for (int64_t m0 = 0; m0 < p.m; m0 += kGemmTileRows)
        for (int64_t n0 = 0; n0 < p.n; n0 += kGemmTileCols) {
          const int64_t m1 = std::min(p.m, m0 + kGemmTileRows), n1 = std::min(p.n, n0 + kGemmTileCols);
          add(Loop::gemm, m0, m1, n0, n1, static_cast<double>((m1 - m0 + 4) * (n1 - n0)) * k);
        }
    } else if (two_d_a && p.k > 0) {
      any_gemv = true;
      for (int64_t n0 = 0; n0 < p.n; n0 += kGemvTileRows) {
        const int64_t n1 = std::min(p.n, n0 + kGemvTileRows);
        add(Loop::gemv, 0, p.m, n0, n1, static_cast<double>((p.m + 10) * (n1 - n0)) * k);
      }
    } else {
      for (int64_t n0 = 0; n0 < p.n; n0 += kDotTileCols) {
        const int64_t n1 = std::min(p.n, n0 + kDotTileCols);
        add(Loop::dot, 0, p.m, n0, n1, static_cast<double>((p.m + 10) * (n1 - n0)) * k);
      }
    }
  }

  // The GEMV groups read a's rows widened to f32 once (only theirs are used; the GEMM packs its own).
  const Tensor a32 = any_gemv ? activations_f32(args.a) : Tensor();
  std::vector<GemvPlan> plans(gemms.size());
  for (size_t g = 0, row0 = 0; g < gemms.size(); row0 += static_cast<size_t>(gemms[g].m), ++g) {
    const Gemm& p = gemms[g];
    if (!any_gemv || p.m > kStreamMaxRows || p.m <= 0) continue;
    GemvPlan& plan = plans[g];
    plan.m = p.m, plan.n = p.n, plan.k = p.k;
    plan.x = a32.data_as<const float>() + static_cast<int64_t>(row0) * p.k;
    plan.w = p.b;
    plan.w_row_bytes = p.ldb * static_cast<int64_t>(dtype_size(args.b.dtype()));
    plan.w_type = row_type(args.b.dtype(), "grouped_mm", "b");
    plan.out = p.out;
    plan.out_type = out_type;
    plan.out_m_stride = p.o_rs, plan.out_n_stride = p.o_cs;
  }

  const int64_t es = static_cast<int64_t>(dtype_size(args.a.dtype()));
  run_balanced(cost, [&](int64_t i) {
    const Tile& t = tiles[static_cast<size_t>(i)];
    const Gemm& p = gemms[static_cast<size_t>(t.group)];
    const int64_t rows = t.m1 - t.m0, cols = t.n1 - t.n0;
    switch (t.loop) {
      case Loop::gemv: pieces.gemv.rows(plans[static_cast<size_t>(t.group)], t.n0, t.n1); return;
      case Loop::gemm: {
        const GemmProblem g = gemm_problem(p, in_type, out_type);
        const int64_t ldc = (cols + 15) / 16 * 16;
        float* c = gemm_scratch(2, kGemmTileRows * ldc);
        gemm_tile_f32(g, t.m0, t.m1, t.n0, t.n1, c, ldc, pieces.gemm);
        pieces.gemm.store(c, ldc, rows, cols, g.out, t.m0, t.n0);
        return;
      }
      case Loop::dot: {
        float* c = gemm_scratch(2, kDotTileRows * kDotTileCols);
        const MatType type = mat_type(args.a.dtype(), "grouped_mm", "a");
        pieces.dot(DotTile{p.a + t.m0 * p.lda * es, nullptr, p.lda, type, p.b + t.n0 * p.ldb * es, p.ldb, type, rows,
                           cols, p.k, c, kDotTileCols});
        pieces.gemm.store(c, kDotTileCols, rows, cols, gemm_problem(p, in_type, out_type).out, t.m0, t.n0);
        return;
      }
    }
  });
}

}  // namespace

#define ENTRIES(isa)                                                    \
  static constexpr GroupedPieces pieces = FOURFOLD_GROUPED_PIECES(isa); \
  t.grouped_mm = {[](const GroupedMmArgs& a) { grouped_mm(a, pieces); }, &grouped_mm_covers};
FOURFOLD_CPU_KERNELS(grouped_mm, ENTRIES)

}  // namespace fourfold::cpu
