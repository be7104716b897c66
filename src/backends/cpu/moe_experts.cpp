// Dedicated moe_experts in two parallel regions (one barrier between them):
//  1. gate and up: tiles of (expert, rows, intermediate columns) over every expert with rows, balanced by
//     cost; each tile computes its gate and up columns and writes h = silu(gate) * up into an f32 [A, I]
//     scratch (A: the routed rows, sorted by expert).
//  2. down and the scatter-add: tiles of output columns, each owning those columns of every token, so the
//     routing-weighted sum over a token's experts needs no atomics; each tile walks the experts with rows,
//     then writes its columns of the output once.
// An expert of at most kStreamMaxRows rows (decode) streams each weight row once through the decode GEMV's row
// loops, on its x rows widened to f32 (and scaled by a power of two for fp8 weights, as the GEMV wants them).
// A larger one (prefill) runs the packed GEMM's tiles (gemm.h), on its x rows gathered
// into one contiguous block first (one copy of the rows, against a packed weight block reused by every row).
// Idle experts are never touched. fp8 (e4m3fn) experts are read as stored, each 128x128 block times its scale.
// FP4 experts (NVFP4, MXFP4) all stream through the GEMV's FP4 rows, kGemvMaxM rows of an expert at a time (a
// prefill re-reads an expert's weights once per 8 of its rows: with top-k of many experts that is one or two
// reads), on rows laid out as that GEMV wants them (fp4_activations).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/balanced.h"
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/float_rows.h"
#include "core/fp4_blocks.h"
#include "fourfold/dtype.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

// As grouped_mm's (see there): experts of at most this many rows stream their weights through dot tiles.
constexpr int64_t kStreamMaxRows = 4;
constexpr int64_t kDotRows = 64;
constexpr int64_t kDotCols = 32;
// Decode (GEMV) work items: up to this many weight rows (phase 1) or output columns (phase 2), each a long run
// of one expert's rows, since the hardware prefetchers restart at every short run (docs/decode.md step 15), but
// at least four items per thread in phase 1 and two in phase 2.
constexpr int64_t kGemvTile = 256;
constexpr int64_t kGemmRows = 288;   // as grouped_mm: two GEMM row blocks per packed weight block
constexpr int64_t kGemmCols = 256;
// gemm_scratch slots: 0 and 1 are the GEMM tile's panels.
constexpr int kSlotGate = 2, kSlotUp = 3, kSlotAcc = 4, kSlotSplit = 5;

bool last_contiguous(const Tensor& t) { return t.size(-1) <= 1 || t.stride(-1) == 1; }

// One expert weight: x's dtype, or e4m3 with its block scale's last dim contiguous, or FP4 with its block scale.
bool weight_ok(const Tensor& w, const Tensor* scale, DType x) {
  if (!last_contiguous(w)) return false;
  if (is_fp4(w.dtype())) return scale != nullptr;
  if (w.dtype() == DType::f8_e4m3fn) return scale != nullptr && last_contiguous(*scale);
  return w.dtype() == x || (x == DType::f32 && w.dtype() == DType::bf16);   // bf16 storage under f32 x
}

// A DotTile's B for rows [row0, ...) of expert e of weight w (and its scales, for fp8).
DotTile weight_rows(DotTile t, const Tensor& w, const Tensor* scale, int64_t e, int64_t row0) {
  t.b = static_cast<const uint8_t*>(w.data()) +
        (e * w.stride(0) + row0 * w.stride(1)) * static_cast<int64_t>(dtype_size(w.dtype()));
  t.ldb = w.stride(1);
  t.b_type = mat_type(w.dtype(), "moe_experts", "weight");
  if (scale != nullptr) {
    t.b_scale = scale->data_as<float>() + e * scale->stride(0);
    t.scale_ld = scale->stride(1);
    t.b_row0 = row0;
  }
  return t;
}

// Expert e's weight [N, K] as the GEMM's B = W^T [K, N] (element (k, n) at w + n * stride(1) + k), fp8 with its
// 128x128 block scales.
GemmOperand weight_operand(const Tensor& w, const Tensor* scale, int64_t e) {
  GemmOperand b{static_cast<const uint8_t*>(w.data()) + e * w.stride(0) * static_cast<int64_t>(dtype_size(w.dtype())),
                row_type(w.dtype(), "moe_experts", "weight"), 1, w.stride(1)};
  if (scale != nullptr) {
    b.scale = scale->data_as<float>() + e * scale->stride(0);
    b.scale_rg = b.scale_cg = 128;
    b.scale_rs = 1;
    b.scale_cs = scale->stride(1);
  }
  return b;
}

// How the GEMV experts' rows of x (or h) reach the GEMV: f32 rows (times 2^exp2 under e4m3 weights, see
// run_gemv), or as bf16 pair terms (pairs non-null: the level's fp8 route on vdpbf16ps).
struct StreamRows {
  const float* rows;
  int exp2;
  const PairActivations* pairs;
  // FP4 weights: the rows in the FP4 GEMV's layout (fp4_activations), ld floats apart (0: not FP4).
  int64_t fp4_ld = 0;
  const Tensor* fp4_rows = nullptr;
};

// The decode GEMV over expert e's weight rows for m rows of x from row r: out[r * out_ld + n], f32. An e4m3
// weight brings its 128x128 block scales.
GemvPlan stream_plan(const Tensor& w, const Tensor* scale, const Tensor* global, int64_t e, const StreamRows& x,
                     int64_t r, int64_t m, int64_t k, float* out, int64_t out_ld) {
  GemvPlan p{};
  p.m = m, p.n = w.size(1), p.k = k;
  p.bias_type = RowType::f32;
  p.out = out;
  p.out_type = RowType::f32;
  p.out_m_stride = out_ld, p.out_n_stride = 1;
  if (is_fp4(w.dtype())) {
    plan_fp4_weight(p, w.select(0, e), scale->select(0, e), fp4_global_value(global, e), *x.fp4_rows);
    p.x += r * x.fp4_ld;
    return p;
  }
  p.x = x.rows == nullptr ? nullptr : x.rows + r * k;
  if (x.pairs != nullptr && w.dtype() == DType::f8_e4m3fn) x.pairs->plan(p, r);
  const int x_exp2 = x.exp2;
  const int64_t es = static_cast<int64_t>(dtype_size(w.dtype()));
  p.w = static_cast<const uint8_t*>(w.data()) + e * w.stride(0) * es;
  p.w_row_bytes = w.stride(1) * es;
  p.w_type = row_type(w.dtype(), "moe_experts", "weight");
  if (p.w_type == RowType::e4m3) {
    p.x_exp2 = x_exp2;
    p.scale = scale->data_as<float>() + e * scale->stride(0);
    p.scale_n_group = p.scale_k_group = 128;
    p.scale_n_stride = scale->stride(1);
    p.scale_k_stride = scale->stride(2);
  }
  return p;
}

// The row ranges [start[e], start[e + 1]) of the experts streamed through the GEMV.
std::vector<std::pair<int64_t, int64_t>> stream_ranges(const std::vector<int64_t>& start, int64_t max_rows) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (size_t e = 0; e + 1 < start.size(); ++e)
    if (const int64_t n = start[e + 1] - start[e]; n > 0 && n <= max_rows) ranges.emplace_back(start[e], start[e + 1]);
  return ranges;
}

// The rows of `ranges` of `rows` [*, width] multiplied by 2^c for the e4m3 GEMV (exact: a power of two, c chosen
// so nothing overflows); returns c.
int scale_stream_rows(float* rows, int64_t width, const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  int c = 112;
  for (auto [r0, r1] : ranges) c = std::min(c, e4m3_activation_exponent(rows + r0 * width, (r1 - r0) * width));
  const float f = std::ldexp(1.0f, c);
  for (auto [r0, r1] : ranges)
    for (int64_t i = r0 * width; i < r1 * width; ++i) rows[i] *= f;
  return c;
}

// The GEMV experts' rows of `rows` [*, width] as the fp8 GEMV wants them (unchanged for other weights):
// bf16 pair terms where the level takes them (into *pairs), else multiplied in place by 2^c for the e4m3 GEMV
// (exact: a power of two, c chosen so nothing overflows).
StreamRows stream_rows(float* rows, int64_t width, const std::vector<int64_t>& start, int64_t max_rows, bool fp8,
                       const GemvPieces& gemv, PairActivations* pairs, Tensor* fp4 = nullptr) {
  if (fp4 != nullptr) {   // every row streams (see the top): all of them in the FP4 layout
    *fp4 = fp4_activations(rows, start.back(), width);
    return {rows, 0, nullptr, (width + kGemvFp4Group - 1) / kGemvFp4Group * kGemvFp4Group, fp4};
  }
  if (!fp8) return {rows, 0, nullptr};
  const auto ranges = stream_ranges(start, max_rows);
  if (gemv.pairs_fast()) {
    *pairs = pair_activations(rows, width, ranges);
    return {rows, 0, pairs};
  }
  return {rows, scale_stream_rows(rows, width, ranges), nullptr};
}

// The GEMM experts' rows packed once per expert for the GEMM's direct path (gemm.h): x's rows for gate
// and up, h's for down, instead of once in every column tile. offset[e] < 0: expert e takes the packed tiles.
struct DirectPack {
  Tensor buffer;
  std::vector<int64_t> offset;
  RowType type = RowType::f32;
  int64_t k = 0;

  bool has(int64_t e) const { return !offset.empty() && offset[static_cast<size_t>(e)] >= 0; }
  // Rows [r0, r0 + rows) of expert e (r0 a multiple of 32).
  DirectRows rows(int64_t e, int64_t n, int64_t r0, int64_t count) const {
    const float* p = buffer.data_as<float>() + offset[static_cast<size_t>(e)];
    return direct_rows(p, type, n, k).groups_from(r0 / 32, count, k);
  }
};

// Packs the rows [start[e], start[e + 1]) of `rows` [*, k] of every GEMM expert whose weight w the direct path
// covers (tiles of up to kGemmRows rows; column tiles, all multiples of 32 when `cols`, w's rows, is).
DirectPack pack_direct(const uint8_t* rows, RowType type, int64_t k, const Tensor& w, const Tensor* w_scale,
                       const std::vector<int64_t>& start, int64_t cols, const GemmPieces& gemm) {
  DirectPack d;
  const int64_t experts = static_cast<int64_t>(start.size()) - 1;
  if (!gemm.direct_fast() || cols % 32 != 0) return d;
  d.type = type, d.k = k;
  d.offset.assign(static_cast<size_t>(experts), -1);
  const int64_t es = type == RowType::bf16 ? 2 : 4;
  int64_t total = 0, split = 0;
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t n = start[static_cast<size_t>(e + 1)] - start[static_cast<size_t>(e)];
    const GemmOperand a{rows + start[static_cast<size_t>(e)] * k * es, type, k, 1};
    if (n <= kStreamMaxRows || !gemm.direct_covers(a, weight_operand(w, w_scale, e), std::min(n, kGemmRows), 32, k)) continue;
    d.offset[static_cast<size_t>(e)] = total;
    total += gemm_direct_packed(type, n, k);
    split = std::max(split, gemm_direct_split(type, n, k));
  }
  if (total == 0) return {};
  d.buffer = Tensor::empty({total}, DType::f32);
  parallel_for(0, experts, 1, [&](int64_t e0, int64_t e1) {
    float* scratch = gemm_scratch(kSlotSplit, split + 1);
    for (int64_t e = e0; e < e1; ++e) {
      if (!d.has(e)) continue;
      const int64_t s = start[static_cast<size_t>(e)], n = start[static_cast<size_t>(e + 1)] - s;
      gemm.pack_direct({rows + s * k * es, type, k, 1}, 0, n, k, d.buffer.data_as<float>() + d.offset[static_cast<size_t>(e)],
                       scratch);
    }
  });
  return d;
}

struct UpTile {
  bool gemm;
  int64_t expert, r0, r1, i0, i1;   // rows: absolute (sorted) row indices
};

bool moe_experts_covers(const MoeExpertsArgs& a) {
  const DType t = a.x.dtype();
  return (t == DType::f32 || t == DType::bf16) && weight_ok(a.gate, a.gate_scale, t) && weight_ok(a.up, a.up_scale, t) &&
         weight_ok(a.down, a.down_scale, t) && last_contiguous(a.x) && a.out.is_contiguous() &&
         !(is_fp4(a.gate.dtype()) && a.gate.size(1) == 0);   // FP4 experts need the GEMV (inter > 0)
}

void moe_experts(const MoeExpertsArgs& a, const GroupedPieces& pieces) {
  const int64_t tokens = a.x.size(0), hidden = a.x.size(1), inter = a.gate.size(1), experts = a.gate.size(0);
  if (tokens == 0 || hidden == 0) return;
  const DType dtype = a.x.dtype();
  const MatType type = mat_type(dtype, "moe_experts", "x");
  const int64_t es = static_cast<int64_t>(dtype_size(dtype));
  std::vector<int64_t> start(static_cast<size_t>(experts + 1), 0);
  {
    const std::vector<double> ends = a.offs.to_vector();
    for (int64_t e = 0; e < experts; ++e) start[static_cast<size_t>(e + 1)] = static_cast<int64_t>(ends[static_cast<size_t>(e)]);
  }
  const auto rows_of = [&](int64_t e) { return start[static_cast<size_t>(e + 1)] - start[static_cast<size_t>(e)]; };
  // FP4 experts stream whatever their rows (see the top), kGemvMaxM rows per GEMV.
  const bool fp4 = is_fp4(a.gate.dtype());
  const int64_t stream_max = fp4 ? INT64_MAX : kStreamMaxRows, stream_step = fp4 ? kGemvMaxM : kDotRows;
  const int64_t total = start.back();
  std::vector<int32_t> token(static_cast<size_t>(total));
  std::vector<float> weight(static_cast<size_t>(total));
  std::vector<const void*> x_rows(static_cast<size_t>(total));
  bool any_gemm = false, any_stream = false;
  for (int64_t e = 0; e < experts; ++e) {
    any_gemm = any_gemm || rows_of(e) > stream_max;
    any_stream = any_stream || (rows_of(e) > 0 && rows_of(e) <= stream_max);
  }
  {
    const std::vector<double> t = a.token_of_row.to_vector(), w = a.row_weight.to_vector();
    const auto* x = static_cast<const uint8_t*>(a.x.data());
    for (int64_t r = 0; r < total; ++r) {
      token[static_cast<size_t>(r)] = static_cast<int32_t>(t[static_cast<size_t>(r)]);
      weight[static_cast<size_t>(r)] = static_cast<float>(w[static_cast<size_t>(r)]);
      x_rows[static_cast<size_t>(r)] = x + token[static_cast<size_t>(r)] * a.x.stride(0) * es;
    }
  }
  // Decode experts stream through the GEMV (fp8 with its block scales), unless gate and up differ in being fp8:
  // they share one f32 copy of x, which the e4m3 GEMV wants scaled (run_gemv); the dot tiles take those.
  const bool gate_fp8 = a.gate.dtype() == DType::f8_e4m3fn, down_fp8 = a.down.dtype() == DType::f8_e4m3fn;
  const bool gemv = (fp4 || gate_fp8 == (a.up.dtype() == DType::f8_e4m3fn)) && inter > 0;
  // x rows, gathered: row r of xs is x[token[r]] for the GEMM experts' rows, row r of x32 the same widened to
  // f32 for the GEMV experts' rows (the other rows of each are left unset).
  Tensor xs = any_gemm ? Tensor::empty({total, hidden}, dtype) : Tensor();
  Tensor x32 = gemv && any_stream ? Tensor::empty({total, hidden}, DType::f32) : Tensor();
  if (xs.defined() || x32.defined())
    parallel_for(0, experts, 1, [&](int64_t e0, int64_t e1) {
      for (int64_t e = e0; e < e1; ++e) {
        const bool stream = rows_of(e) <= stream_max;
        if (stream && !gemv) continue;
        for (int64_t r = start[static_cast<size_t>(e)]; r < start[static_cast<size_t>(e + 1)]; ++r) {
          if (stream) widen_row(dtype, x_rows[static_cast<size_t>(r)], 1, hidden, x32.data_as<float>() + r * hidden);
          else std::memcpy(xs.data_as<uint8_t>() + r * hidden * es, x_rows[static_cast<size_t>(r)], static_cast<size_t>(hidden * es));
        }
      }
    });
  PairActivations x_pairs, h_pairs;
  Tensor x_fp4, h_fp4;
  const StreamRows x_stream = stream_rows(x32.defined() ? x32.data_as<float>() : nullptr, hidden, start, kStreamMaxRows,
                                          gate_fp8 && x32.defined(), pieces.gemv, &x_pairs,
                                          fp4 && x32.defined() ? &x_fp4 : nullptr);
  // gate and up share the direct path's packed x (the same dtypes: weight_ok).
  const DirectPack x_direct = any_gemm && a.gate.dtype() == a.up.dtype()
                                  ? pack_direct(xs.data_as<uint8_t>(), row_type(dtype, "moe_experts", "x"), hidden, a.gate, a.gate_scale, start, inter, pieces.gemm)
                                  : DirectPack{};

  // 1. h = silu(x gate^T) * (x up^T) per row, [total, inter] f32. Costs as grouped_mm's (multiply-adds; a
  // streamed weight element counts as ten, a packed one as four more rows).
  Tensor h_tensor = Tensor::empty({std::max<int64_t>(total, 1), std::max<int64_t>(inter, 1)}, DType::f32);
  float* h = h_tensor.data_as<float>();
  std::vector<UpTile> tiles;
  std::vector<double> cost;
  int64_t stream_experts = 0;
  for (int64_t e = 0; e < experts; ++e) stream_experts += rows_of(e) > 0 && rows_of(e) <= stream_max ? 1 : 0;
  const int64_t gemv_rows = std::clamp<int64_t>((stream_experts * inter / (4 * num_threads()) + 31) / 32 * 32, 64, kGemvTile);
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t s = start[static_cast<size_t>(e)], n = rows_of(e);
    const bool gemm = n > stream_max;
    const int64_t tr = gemm ? kGemmRows : gemv ? stream_step : kDotRows, tc = gemm ? kGemmCols : gemv ? gemv_rows : kDotCols;
    for (int64_t r0 = 0; r0 < n; r0 += tr)
      for (int64_t i0 = 0; i0 < inter; i0 += tc) {
        const int64_t r1 = std::min(n, r0 + tr), i1 = std::min(inter, i0 + tc);
        tiles.push_back({gemm, e, s + r0, s + r1, i0, i1});
        cost.push_back(2.0 * static_cast<double>((r1 - r0 + (gemm ? 4 : 10)) * (i1 - i0)) * static_cast<double>(hidden + 1));
      }
  }
  run_balanced(cost, [&](int64_t i) {
    const UpTile& t = tiles[static_cast<size_t>(i)];
    const int64_t rows = t.r1 - t.r0, cols = t.i1 - t.i0;
    float* h0 = h + t.r0 * inter + t.i0;
    if (t.gemm) {
      const int64_t s = start[static_cast<size_t>(t.expert)];
      const GemmOperand xe{xs.data_as<const uint8_t>() + s * hidden * es, row_type(dtype, "moe_experts", "x"), hidden, 1};
      const GemmProblem gate{rows_of(t.expert), inter, hidden, xe, weight_operand(a.gate, a.gate_scale, t.expert), {}};
      const GemmProblem up{rows_of(t.expert), inter, hidden, xe, weight_operand(a.up, a.up_scale, t.expert), {}};
      const int64_t ldc = (cols + 15) / 16 * 16;
      float* g = gemm_scratch(kSlotGate, kGemmRows * ldc);
      float* u = gemm_scratch(kSlotUp, kGemmRows * ldc);
      if (x_direct.has(t.expert)) {
        const DirectRows xr = x_direct.rows(t.expert, rows_of(t.expert), t.r0 - s, rows);
        pieces.gemm.tile_direct(xr, gate.b, t.i0, t.i1, hidden, g, ldc);
        pieces.gemm.tile_direct(xr, up.b, t.i0, t.i1, hidden, u, ldc);
      } else {
        gemm_tile_f32(gate, t.r0 - s, t.r1 - s, t.i0, t.i1, g, ldc, pieces.gemm);
        gemm_tile_f32(up, t.r0 - s, t.r1 - s, t.i0, t.i1, u, ldc, pieces.gemm);
      }
      for (int64_t r = 0; r < rows; ++r) pieces.silu_mul(g + r * ldc, u + r * ldc, h0 + r * inter, RowType::f32, cols);
      return;
    }
    if (gemv) {
      // up's columns land in a [rows, inter] scratch at the same offsets as gate's in h.
      float* u = gemm_scratch(kSlotUp, kGemvMaxM * inter);
      pieces.gemv.rows(stream_plan(a.gate, a.gate_scale, a.gate_global, t.expert, x_stream, t.r0, rows, hidden,
                                   h + t.r0 * inter, inter),
                       t.i0, t.i1);
      pieces.gemv.rows(stream_plan(a.up, a.up_scale, a.up_global, t.expert, x_stream, t.r0, rows, hidden, u, inter), t.i0,
                       t.i1);
      for (int64_t r = 0; r < rows; ++r)
        pieces.silu_mul(h0 + r * inter, u + r * inter + t.i0, h0 + r * inter, RowType::f32, cols);
      return;
    }
    float* u = gemm_scratch(kSlotUp, kDotRows * kDotCols);
    const DotTile x_tile{nullptr, x_rows.data() + t.r0, 0, type, nullptr, 0, type, rows, cols, hidden, nullptr, 0};
    DotTile g = weight_rows(x_tile, a.gate, a.gate_scale, t.expert, t.i0);
    g.out = h0;
    g.ldo = inter;
    pieces.dot(g);
    DotTile up = weight_rows(x_tile, a.up, a.up_scale, t.expert, t.i0);
    up.out = u;
    up.ldo = kDotCols;
    pieces.dot(up);
    for (int64_t r = 0; r < rows; ++r) pieces.silu_mul(h0 + r * inter, u + r * kDotCols, h0 + r * inter, RowType::f32, cols);
  });

  const StreamRows h_stream = stream_rows(h, inter, start, kStreamMaxRows, gemv && down_fp8 && any_stream, pieces.gemv,
                                          &h_pairs, fp4 && any_stream ? &h_fp4 : nullptr);

  // 2. out[t, cols] = sum over t's rows of weight * (h down^T)[row, cols], one column tile per work item:
  // 32 columns for the dot tiles, up to kGemvTile for the GEMV rows (see there), wider when GEMM tiles run
  // (their packed rows of h are reused across the width), but at least two items per thread.
  int64_t width = kDotCols;
  const int64_t share = (hidden + 2 * num_threads() - 1) / (2 * num_threads());
  if (any_gemm) width = std::clamp<int64_t>((share + kDotCols - 1) / kDotCols * kDotCols, 2 * kDotCols, kGemmCols);
  else if (gemv) width = std::clamp<int64_t>((share + kDotCols - 1) / kDotCols * kDotCols, kDotCols, kGemvTile);
  const int64_t ldy = (width + 15) / 16 * 16;
  const DirectPack h_direct = any_gemm ? pack_direct(reinterpret_cast<const uint8_t*>(h), RowType::f32, inter, a.down, a.down_scale, start,
                                                     hidden, pieces.gemm)
                                       : DirectPack{};
  auto* out = static_cast<uint8_t*>(a.out.data());
  const GemmOut out_view{out, row_type(dtype, "moe_experts", "x"), hidden, 1, nullptr, RowType::f32, 0};
  const int64_t col_tiles = (hidden + width - 1) / width;
  parallel_for(0, col_tiles, 1, [&](int64_t begin, int64_t end) {
    float* acc = gemm_scratch(kSlotAcc, tokens * ldy);
    float* y = gemm_scratch(kSlotUp, std::max(kGemmRows, kDotRows) * ldy);
    float* y_rows = gemm_scratch(kSlotGate, kGemvMaxM * hidden);   // the GEMV's output rows, full width
    for (int64_t ct = begin; ct < end; ++ct) {
      const int64_t o0 = ct * width, o1 = std::min(hidden, o0 + width), cols = o1 - o0;
      std::fill(acc, acc + tokens * ldy, 0.0f);
      for (int64_t e = 0; e < experts; ++e) {
        const int64_t s = start[static_cast<size_t>(e)], n = rows_of(e);
        const bool gemm = n > stream_max;
        const int64_t step = gemm ? kGemmRows : gemv ? stream_step : kDotRows;
        for (int64_t r0 = 0; r0 < n; r0 += step) {
          const int64_t rows = std::min(step, n - r0);
          if (gemm && h_direct.has(e)) {
            pieces.gemm.tile_direct(h_direct.rows(e, n, r0, rows), weight_operand(a.down, a.down_scale, e), o0, o1, inter, y, ldy);
          } else if (gemm) {
            const GemmProblem down{n, hidden, inter, {reinterpret_cast<const uint8_t*>(h + s * inter), RowType::f32, inter, 1},
                                   weight_operand(a.down, a.down_scale, e), {}};
            gemm_tile_f32(down, r0, r0 + rows, o0, o1, y, ldy, pieces.gemm);
          } else if (gemv) {
            pieces.gemv.rows(stream_plan(a.down, a.down_scale, a.down_global, e, h_stream, s + r0, rows, inter, y_rows, hidden),
                             o0, o1);
          } else {
            const DotTile h_rows{h + (s + r0) * inter, nullptr, inter, MatType::f32, nullptr, 0, type, rows, cols, inter,
                                 y, ldy};
            pieces.dot(weight_rows(h_rows, a.down, a.down_scale, e, o0));
          }
          const bool in_rows = !gemm && gemv;
          for (int64_t r = 0; r < rows; ++r) {
            const float w = weight[static_cast<size_t>(s + r0 + r)];
            float* dst = acc + token[static_cast<size_t>(s + r0 + r)] * ldy;
            const float* src = in_rows ? y_rows + r * hidden + o0 : y + r * ldy;
            for (int64_t c = 0; c < cols; ++c) dst[c] += w * src[c];
          }
        }
      }
      pieces.gemm.store(acc, ldy, tokens, cols, out_view, 0, o0);
    }
  });
}

}  // namespace

#define ENTRIES(isa)                                                    \
  static constexpr GroupedPieces pieces = FOURFOLD_GROUPED_PIECES(isa); \
  t.moe_experts = {[](const MoeExpertsArgs& a) { moe_experts(a, pieces); }, &moe_experts_covers};
FOURFOLD_CPU_KERNELS(moe_experts, ENTRIES)

}  // namespace fourfold::cpu
