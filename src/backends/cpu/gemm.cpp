// The packed GEMM driver (Goto/BLIS structure): a problem's output is cut into tiles of up to kTileRows x kNc;
// a tile walks K in kKc blocks, packing the B block (kc x tile columns) once and then, per kMc rows, the A block,
// and accumulates the register-tile products in an f32 scratch tile that the epilogue adds the bias to and
// rounds into the output. All problems' tiles run in one parallel_for.
#include "backends/cpu/gemm.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

// Block sizes (f32 panels; the bf16 pair path's are half the bytes), each sized for the cache level beside it;
// kc is the fastest of 256 to 768 on Zen 4 (docs/gemm.md, Structure).
constexpr int64_t kKc = 512;        // reduction block: an A panel (mr x kc) is 24 KiB, a B panel (kc x nr) 64 KiB
constexpr int64_t kMcTarget = 144;  // rows of A per block: 144 x 512 floats = 288 KiB, in L2 (1 MiB)
constexpr int64_t kNc = 512;        // tile columns: the packed B block (1 MiB) streams from L2/L3 panel by panel
constexpr int64_t kTileRows = 576;  // tile rows: B's block is reused by four A blocks before it is repacked

struct Tile {
  int problem;
  int64_t m0, m1, n0, n1;
};

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, FreeDeleter>;

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }
int64_t ceil_div(int64_t v, int64_t d) { return (v + d - 1) / d; }

}  // namespace

// Kept between calls: a fresh allocation of this size is an mmap whose page faults and zeroing cost a tenth of a
// small prefill GEMM.
float* gemm_scratch(int slot, int64_t count) {
  thread_local Buffer buffers[kGemmScratchSlots];
  thread_local int64_t sizes[kGemmScratchSlots] = {};
  if (sizes[slot] < count) {
    const size_t bytes = (static_cast<size_t>(std::max<int64_t>(count, 16)) * 4 + 63) / 64 * 64;
    buffers[slot].reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    sizes[slot] = count;
  }
  return buffers[slot].get();
}

void gemm_tile_f32(const GemmProblem& g, int64_t m0, int64_t m1, int64_t n0, int64_t n1, float* c, int64_t ldc,
                   const GemmPieces& pieces) {
  const int64_t tm = m1 - m0, tn = n1 - n0, mr = pieces.mr(), nr = pieces.nr();
  const int64_t mc = std::min(round_up(kMcTarget, mr), round_up(tm, mr));
  if (g.k == 0)
    for (int64_t i = 0; i < tm; ++i) std::fill(c + i * ldc, c + i * ldc + tn, 0.0f);
  // Few rows against a bf16 weight (MoE experts): the weight's rows are read as they lie (AMX tiles, or pairs
  // broadcast for vdpbf16ps), with nothing packed but the rows of a (f32 ones as three exact bf16 terms); see
  // gemm_direct.cpp.
  if (g.b_packer == nullptr && pieces.direct_fast() && pieces.direct_covers(g.a, g.b, tm, tn, g.k)) {
    float* packed = gemm_scratch(0, gemm_direct_packed(g.a.type, tm, g.k));
    pieces.pack_direct(g.a, m0, tm, g.k, packed, gemm_scratch(1, gemm_direct_split(g.a.type, tm, g.k)));
    pieces.tile_direct(direct_rows(packed, g.a.type, tm, g.k), g.b, n0, n1, g.k, c, ldc);
    return;
  }
  const bool bf16 = g.a.type == RowType::bf16 && g.b.type == RowType::bf16;
  // AMX tiles for bf16 operands where the level has them, except under a packer of its own (conv's im2col),
  // which writes the pair panels only.
  const bool amx = bf16 && g.b_packer == nullptr && pieces.amx_fast();
  const bool pairs = !amx && bf16 && pieces.pairs_fast();
  const auto pack_a = amx ? pieces.pack_a_amx : pairs ? pieces.pack_a_pairs : pieces.pack_a;
  const auto pack_b = [&](int64_t k0, int64_t kc, float* pb) {
    if (g.b_packer != nullptr)
      (pairs ? g.b_packer->pack_pairs : g.b_packer->pack)(g.b_packer->source, k0, kc, n0, tn, pb);
    else
      (amx ? pieces.pack_b_amx : pairs ? pieces.pack_b_pairs : pieces.pack_b)(g.b, k0, kc, n0, tn, pb);
  };
  const auto block = amx ? pieces.block_amx : pairs ? pieces.block_pairs : pieces.block;
  float* const pa = gemm_scratch(0, mc * kKc);
  float* const pb = gemm_scratch(1, round_up(tn, nr) * kKc);
  for (int64_t k0 = 0; k0 < g.k; k0 += kKc) {
    const int64_t kc = std::min(kKc, g.k - k0);
    pack_b(k0, kc, pb);
    for (int64_t i0 = 0; i0 < tm; i0 += mc) {
      const int64_t rows = std::min(mc, tm - i0);
      pack_a(g.a, m0 + i0, rows, k0, kc, pa);
      block(pa, pb, rows, tn, kc, c + i0 * ldc, ldc, k0 > 0);
    }
  }
}


GemmOperand operand(const Tensor& t, bool transposed) {
  const int64_t rs = t.stride(0), cs = t.stride(1);
  return {static_cast<const uint8_t*>(t.data()), row_type(t.dtype(), "gemm", "operand"), transposed ? cs : rs, transposed ? rs : cs};
}

GemmOperand operand(const Tensor& t, bool transposed, const Tensor& scale, ScaleRecipe recipe) {
  GemmOperand o = operand(t);
  o.scale = scale.data_as<const float>();
  const bool blocks = recipe == ScaleRecipe::block_128x128;
  if (recipe != ScaleRecipe::tensorwise) {   // a tensorwise scale is read at index 0 only
    o.scale_rg = blocks ? 128 : 1;
    o.scale_rs = scale.stride(0);
  }
  if (blocks || recipe == ScaleRecipe::block_1x128) {
    o.scale_cg = 128;
    o.scale_cs = scale.stride(1);
  }
  if (transposed) {
    std::swap(o.rs, o.cs);
    std::swap(o.scale_rg, o.scale_cg);
    std::swap(o.scale_rs, o.scale_cs);
  }
  return o;
}

GemmOut output(Tensor& t, const Tensor* bias) {
  GemmOut o{static_cast<uint8_t*>(t.data()), row_type(t.dtype(), "gemm", "out"), t.stride(0), t.stride(1), nullptr, RowType::f32, 0};
  if (bias != nullptr) {
    o.bias = static_cast<const uint8_t*>(bias->data());
    o.bias_type = row_type(bias->dtype(), "gemm", "bias");
    o.bias_stride = bias->stride(0);
  }
  return o;
}

void gemm(const std::vector<GemmProblem>& problems, const GemmPieces& pieces) {
  const int64_t mr = pieces.mr(), nr = pieces.nr();
  const int64_t mc_max = round_up(kMcTarget, mr);
  const int threads = num_threads();

  // Tile shapes. Several problems (bmm batches, linear_backward): the default shape, shrunk (columns first,
  // then rows) until there are two tiles per thread. One problem (linear): the fewest tiles of at most the
  // default size, then more until their count divides among the threads, all of near-equal size, so that
  // the static split of parallel_for leaves no thread idle at the end (one thread: no need to split).
  const int64_t default_m = round_up(kTileRows, mc_max);
  int64_t tile_n = kNc, tile_m = default_m;
  const auto count_tiles = [&](int64_t tm, int64_t tn) {
    int64_t t = 0;
    for (const GemmProblem& p : problems)
      if (p.m > 0 && p.n > 0) t += ceil_div(p.m, tm) * ceil_div(p.n, tn);
    return t;
  };
  if (problems.size() == 1 && threads > 1) {
    const int64_t m = problems[0].m, n = problems[0].n;
    int64_t mb = std::max<int64_t>(1, ceil_div(m, default_m)), nb = std::max<int64_t>(1, ceil_div(n, kNc));
    while ((mb * nb) % threads != 0 && mb * nb < 8 * threads) {
      if (ceil_div(n, nb + 1) >= 2 * nr) ++nb;
      else if (ceil_div(m, mb + 1) >= mr) ++mb;
      else break;
    }
    tile_m = round_up(ceil_div(std::max<int64_t>(m, 1), mb), mr);
    tile_n = round_up(ceil_div(std::max<int64_t>(n, 1), nb), nr);
  }
  // Tiles of at most the direct path's rows, though each tile reads the weight again, rather than the f32 FMA
  // path at half the pair rate: for f32 rows against bf16 weights at the amx level (their f32 rows split into
  // bf16 terms), and for any rows against fp8 weights where the level has the direct path (the packed path
  // widens codes times scales into f32 panels; the direct path keeps them bf16 on vdpbf16ps).
  bool direct = pieces.direct_fast();
  int64_t direct_rows = tile_m;
  for (const GemmProblem& p : problems) {
    const bool fp8_weight = p.b.type == RowType::e4m3 || p.b.type == RowType::e5m2;
    direct = direct && (fp8_weight || (pieces.amx_fast() && p.a.type == RowType::f32)) && p.b_packer == nullptr &&
             pieces.direct_covers(p.a, p.b, 1, 32, p.k);
    if (direct) direct_rows = std::min(direct_rows, pieces.direct_max_rows(p.a.type, p.k));
  }
  if (direct && direct_rows >= 1) tile_m = std::min(tile_m, direct_rows);
  while (threads > 1 && count_tiles(tile_m, tile_n) < 2 * threads) {
    if (tile_n > 4 * nr) tile_n = round_up(tile_n / 2, nr);
    else if (tile_m > 2 * mr) tile_m = round_up(tile_m / 2, mr);
    else break;
  }

  std::vector<Tile> tiles;
  int64_t max_n = 0, max_m = 0;
  for (int p = 0; p < static_cast<int>(problems.size()); ++p) {
    const GemmProblem& g = problems[p];
    if (g.m <= 0 || g.n <= 0) continue;
    for (int64_t m0 = 0; m0 < g.m; m0 += tile_m)
      for (int64_t n0 = 0; n0 < g.n; n0 += tile_n) {
        tiles.push_back({p, m0, std::min(g.m, m0 + tile_m), n0, std::min(g.n, n0 + tile_n)});
        max_m = std::max(max_m, tiles.back().m1 - m0);
        max_n = std::max(max_n, tiles.back().n1 - n0);
      }
  }
  if (tiles.empty()) return;
  const int64_t ldc = round_up(max_n, 16);

  parallel_for(0, static_cast<int64_t>(tiles.size()), 1, [&](int64_t begin, int64_t end) {
    float* const c = gemm_scratch(2, max_m * ldc);
    for (int64_t t = begin; t < end; ++t) {
      const Tile& tile = tiles[t];
      const GemmProblem& g = problems[tile.problem];
      gemm_tile_f32(g, tile.m0, tile.m1, tile.n0, tile.n1, c, ldc, pieces);
      pieces.store(c, ldc, tile.m1 - tile.m0, tile.n1 - tile.n0, g.out, tile.m0, tile.n0);
    }
  });
}

}  // namespace fourfold::cpu
