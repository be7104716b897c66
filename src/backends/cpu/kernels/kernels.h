// The per-ISA kernels of the dedicated CPU tier: plain-data plans in, one declaration set per ISA namespace.
// This header holds the basic types (RowType, ...) and the pieces several ops share (GEMM, GEMV, dot tiles,
// attention, softmax); an op's own loop is declared in its own header beside this one (constant_pad_nd.h,
// rms_norm.h, ...): the plan it reads and, for every level of FOURFOLD_ISA_LEVELS, its function in
// namespace fourfold::cpu::<level>. A new op's loop adds such a header and leaves this one alone.
//
// Each kernels/*.cpp is compiled once per ISA (CMakeLists.txt, fourfold_cpu_isa) with
// FOURFOLD_ISA_NAMESPACE set to the level's name and that level's -m flags. Those files include only the
// kernel headers (this one, vec.h, the per-op ones) and the C/C++ library: an inline function from a shared
// header (Tensor, std::function, ...) compiled with -mavx512f could be the copy the linker keeps for every
// caller, so the planning, the Tensor access and the threading stay in the baseline-compiled callers
// (../constant_pad_nd.cpp, ../softmax.cpp).
#pragma once

#include <cstdint>

#include "backends/cpu/isa_levels.h"   // FOURFOLD_ISA_LEVELS, for the per-level declarations

namespace fourfold::cpu {

// Element types of rows, GEMM operands and decode GEMV weights (fp8 only as GEMM operands and weights; e2m1,
// packed FP4 pairs, only as decode GEMV weights). The one mapping from a dtype is backends/cpu/kernel_types.h.
enum class RowType : int { f32 = 0, bf16 = 1, f16 = 2, e4m3 = 3, e5m2 = 4, e2m1 = 5 };

// Floats of each of softmax_stats's kept and shifts buffers for a chunk of n elements (one vector of slack).
inline int64_t softmax_kept_floats(int64_t n) { return n + 16; }

// One chunk's online statistics: max over the chunk, and sum of exp(x - max); nan when a NaN was seen.
struct RowStats {
  float max;
  double sum;
  bool nan;
};

// ---- GEMM (linear prefill, matmul, linear_backward): operands packed to f32 panels, f32 accumulation ----

// A matrix operand of any layout: element (r, c) lies at data + (r * rs + c * cs) * size(type). Strides are in
// elements and may be 0 (broadcast) or negative. fp8 operands carry their dequantization scale: element (r, c)
// counts as its value times scale[(r / scale_rg) * scale_rs + (c / scale_cg) * scale_cs] (groups of 1, 128 or
// kGemmWholeGroup), applied while packing into the f32 panels.
inline constexpr int64_t kGemmWholeGroup = INT64_C(1) << 62;
struct GemmOperand {
  const uint8_t* data;
  RowType type;
  int64_t rs, cs;
  const float* scale = nullptr;
  int64_t scale_rg = kGemmWholeGroup, scale_cg = kGemmWholeGroup, scale_rs = 0, scale_cs = 0;
};

// The GEMM's direct path (gemm_direct.cpp): a tile's rows packed as terms (1 per bf16 row, 3 per f32 row); on
// AMX at most this many bytes, which stay in L2 (2 MiB on the AMX Xeons) while the weight streams past them once.
inline constexpr int64_t kDirectMaxTermBytes = INT64_C(1536) << 10;
// Rows packed by gemm_pack_direct: group g (32 rows) of term t at data + t * term_stride + g * 16 * k uint32s.
struct DirectRows {
  const uint32_t* data;
  int64_t term_stride;
  int terms;
  int64_t rows;
  // Rows [32 * g0, 32 * g0 + count) of these.
  DirectRows groups_from(int64_t g0, int64_t count, int64_t k) const { return {data + g0 * 16 * k, term_stride, terms, count}; }
};
inline constexpr int kDirectTermsF32 = 3;   // any finite f32 is the exact sum of three bf16 (8 + 8 + 8 bits)
inline int direct_terms(RowType a) { return a == RowType::bf16 ? 1 : kDirectTermsF32; }
// gemm_pack_direct's output and its f32 rows' split (floats each; the split is empty for bf16 rows).
inline int64_t gemm_direct_packed(RowType a, int64_t rows, int64_t k) { return (rows + 31) / 32 * 32 * direct_terms(a) * (k / 2); }
inline int64_t gemm_direct_split(RowType a, int64_t rows, int64_t k) { return a == RowType::bf16 ? 0 : 3 * rows * k / 2; }
inline DirectRows direct_rows(const float* packed, RowType a, int64_t rows, int64_t k) {
  return {reinterpret_cast<const uint32_t*>(packed), (rows + 31) / 32 * 32 * (k / 2), direct_terms(a), rows};
}

// Where a GEMM's result goes: out(r, c) = round(acc(r, c) + bias[c * bias_stride]) (bias null: none).
struct GemmOut {
  uint8_t* data;
  RowType type;
  int64_t rs, cs;
  const uint8_t* bias;
  RowType bias_type;
  int64_t bias_stride;
  bool bias_by_row = false;       // bias[r * bias_stride] instead (conv: one bias per output channel = row)
};

// ---- scaled_dot_product_attention: one tile of query rows (sharing one KV head) against a range of keys,
// with online softmax. K and V rows are read through a row stride (a narrowed KV cache) a block of
// kAttnKeyBlock keys at a time, and each block's scores are folded into the rows' running state.
inline constexpr int kAttnMaxRows = 64;     // query rows per tile: GQA group 8 x 8 decode rows in one pass
inline constexpr int kAttnKeyBlock = 64;    // keys scored together
inline constexpr int kAttnPad = 16;         // e_pad and ev_pad are multiples of this (the widest vector)

enum class AttnMask : int { none = 0, boolean = 1, additive = 2 };

struct AttnTile {
  int rows;                       // 1..kAttnMaxRows
  int64_t e, ev, e_pad, ev_pad;   // head dims, and the same rounded up to kAttnPad
  float scale;                    // applied to q.k (0 when e == 0)
  const float* q;                 // [rows, e_pad] f32, zero-padded
  RowType kv_type;                // f32, bf16 or f16 K and V
  const uint8_t* k;               // key 0 of this head; keys k_stride bytes apart, elements contiguous
  int64_t k_stride;
  const uint8_t* v;
  int64_t v_stride;
  int64_t key_begin, key_end;     // the keys to fold in
  const int64_t* key_limit;       // per row: keys >= key_limit[r] are not attended (causal; S otherwise)
  AttnMask mask;
  RowType mask_type;              // additive masks: the element type
  const uint8_t* const* mask_row; // per row: the mask element of key 0
  int64_t mask_stride;            // bytes between keys' mask elements (0: broadcast over keys)
  float* m;                       // per row running max (-inf at first)
  float* l;                       // per row running sum of exp(score - m)
  float* acc;                     // [rows, ev_pad] running sum of exp(score - m) * v
  float* scratch;                 // attn_scratch_floats(e_pad, ev_pad) floats
};

// Query rows of the general tile's packed Q and P panels: kAttnMaxRows rounded up to every level's register
// tile height (4, 6, 12).
inline constexpr int kAttnPanelRows = 72;

inline int64_t attn_scratch_floats(int64_t e_pad, int64_t ev_pad) {
  // The decode tile: its q rows, scores, and [kAttnMaxRows, ev_pad + 16] accumulators and bf16 q rows.
  const int64_t decode = kAttnKeyBlock * (e_pad + ev_pad) + kAttnMaxRows * kAttnKeyBlock + kAttnMaxRows * (ev_pad + 16);
  // The general tile: packed Q, K, V and P panels, the scores, bf16 q rows, each region 64-byte aligned.
  const int64_t general = kAttnPanelRows * e_pad + kAttnKeyBlock * e_pad + kAttnKeyBlock * (ev_pad + 16) +
                          kAttnPanelRows * kAttnKeyBlock + kAttnMaxRows * kAttnKeyBlock +
                          kAttnMaxRows * (e_pad + 16) / 2 + 6 * 16;
  return decode > general ? decode : general;
}

// grouped_mm and moe_experts: one tile of out[m, n] = sum_k a[m, k] * bt[n, k] over K-contiguous rows of A
// and of B^T (a checkpoint's [out, in] weight rows), accumulated in f32, written to an f32 tile.
// e4m3 (B only): float8_e4m3fn weights, element (n, k) times b_scale[((b_row0 + n) / 128) * scale_ld + k / 128].
enum class MatType : int { f32 = 0, bf16 = 1, e4m3 = 2 };
struct DotTile {
  const void* a;                  // row m at a + m * lda elements, unless a_rows is given
  const void* const* a_rows;      // null, or the address of each row (gathered rows)
  int64_t lda;
  MatType a_type;
  const void* b;                  // row n of B^T at b + n * ldb elements
  int64_t ldb;
  MatType b_type;
  int64_t rows, cols, k;
  float* out;                     // out[m * ldo + n]
  int64_t ldo;
  const float* b_scale = nullptr; // e4m3 only: 128x128 block scales of the whole weight
  int64_t scale_ld = 0;
  int64_t b_row0 = 0;             // the weight row of B^T row 0 (for its scale block)
};

// ---- Decode GEMV (linear with M <= 8, scaled_linear, small-M scaled_mm): out[m, n] = sum_k x[m, k] * w(n, k).
inline constexpr int kGemvMaxM = 8;

// K is summed in blocks of this many elements (per lane; 128 under 128-wide scale blocks), the blocks' sums
// then added (and scaled): long enough to amortize each block's bookkeeping, short enough for two-level sums.
inline constexpr int64_t kGemvKBlock = 512;
// A scale group spanning every n or every k (tensorwise, rowwise).
inline constexpr int64_t kGemvWholeGroup = INT64_C(1) << 62;

struct GemvPlan {
  int64_t m, n, k;                // 1 <= m <= kGemvMaxM
  const float* x;                 // [m, k] contiguous f32: the activations, converted (and scaled) once
  int x_exp2;                     // x holds the activations times 2^x_exp2 (e4m3 weights: see run_gemv), else 0
  const uint8_t* w;               // weight element (0, 0); row n starts w_row_bytes * n later, k contiguous
  int64_t w_row_bytes;
  RowType w_type;                 // the stored weight; fp8 is converted to f32 in registers, never into a dequantized copy
  // Dequantization scale, or null: element (n, k) of the weight counts as w(n, k) * scale[(n / scale_n_group)
  // * scale_n_stride + (k / scale_k_group) * scale_k_stride]; scale_k_group is 128 or whole.
  const float* scale;
  int64_t scale_n_group, scale_k_group, scale_n_stride, scale_k_stride;
  const void* bias;               // [n] (element stride bias_stride) or null
  RowType bias_type;
  int64_t bias_stride;
  void* out;                      // element (m, n) at out + m * out_m_stride + n * out_n_stride (elements)
  RowType out_type;
  int64_t out_m_stride, out_n_stride;
  // fp8 weights at a level where gemv_pairs_fast(): the activations as bf16 pairs (cpu_ops.h, pair_activations),
  // or null (then x as above). Row m's line j (64 elements) holds xp_terms lines of 64 bf16 terms from
  // xp + m * xp_ld + j * 64 * xp_terms, element i of the line at slot gemv_pair_slot(i); the terms of an element
  // sum exactly to it times 2^xp_exp2.
  const uint16_t* xp;
  int64_t xp_ld;
  int xp_terms, xp_exp2;
  // With three terms (f32 activations) the route multiplies in f32 FMAs instead: the same scaled activations
  // as f32, element i of row m's line j at xw + m * xw_ld + j * 64 + gemv_pair_wide_slot(i) (null otherwise).
  const float* xw;
  int64_t xw_ld;
  // FP4 weights (w_type e2m1: row n holds K/2 bytes of code pairs, core/fp4_blocks.h). The block of k has the
  // scale code fp4_scale[n * fp4_scale_n_stride + (k / fp4_block) * fp4_scale_k_stride], worth
  // fp4_scale_table[code] (e4m3fn, fp4_block 16, or e8m0fnu, 32); every output is times fp4_global. x is then
  // laid out in groups of kGemvFp4Group (gemv_fp4_slot), fp4_x_ld floats per row (K rounded up to the group,
  // zeros past K).
  const uint8_t* fp4_scale;
  int64_t fp4_scale_n_stride, fp4_scale_k_stride;
  int fp4_block;
  const float* fp4_scale_table;   // 256 floats
  float fp4_global;
  int64_t fp4_x_ld;
};

// The FP4 layout of the activations: each group of 32 elements (16 code bytes) holds its even elements, then its
// odd ones, so that the low and the high nibbles of the codes each meet their activations in lane order without
// a shuffle to interleave them.
inline constexpr int64_t kGemvFp4Group = 32;
constexpr int64_t gemv_fp4_slot(int64_t i) {
  const int64_t g = i / kGemvFp4Group * kGemvFp4Group, t = i % kGemvFp4Group;
  return g + (t % 2) * (kGemvFp4Group / 2) + t / 2;
}

// The pair layout of one 64-element line. The kernel turns 64 fp8 codes into bf16 by two byte lookups (high and
// low bytes) and interleaves them within each 128-bit lane: the first vector of 32 bf16 holds codes 16L + t and
// the second 16L + 8 + t at slot 8L + t (L = lane 0..3, t = 0..7). vdpbf16ps sums each weight with the
// activation in the same slot, so the activations are laid out the same way, once per call.
inline constexpr int64_t kGemvPairLine = 64;
inline constexpr int kGemvMaxTerms = 3;   // any finite f32 is the exact sum of three bf16 (8 + 8 + 8 bits)
constexpr int gemv_pair_slot(int i) {
  const int lane = i / 16, t = i % 16;
  return t < 8 ? 8 * lane + t : 32 + 8 * lane + (t - 8);
}

// The f32 layout of one line for the FMA form of the pair route: the weights' two vectors of 32 bf16 widen to
// four of 16 f32 (the even slots, then the odd ones, of each), so slot s moves to (s / 32) * 32 + (s % 2) * 16 +
// (s % 32) / 2.
constexpr int gemv_pair_wide_slot(int i) {
  const int s = gemv_pair_slot(i);
  return s / 32 * 32 + s % 2 * 16 + s % 32 / 2;
}

// ---- Small-M matmul (M <= kMatmulRowsMax rows): out rows as sums of B's rows scaled by a's elements, read
// where they lie (no packing: with so few rows there is nothing to amortize it over). B and out have unit
// stride along N; real f32/bf16/f16 (one type for a, b, out) or complex64 (interleaved f32 pairs).
inline constexpr int64_t kMatmulRowsMax = 8;
inline constexpr int64_t kMatmulRowsTile = 64;   // floats of an output row held in registers
struct MatmulRowsPlan {
  int64_t m, k;
  bool complex;                   // complex64: strides below count complex elements
  RowType type;                   // real: the element type of a, b and out
  const uint8_t* a;               // element (i, kk) at a + (i * a_rs + kk * a_cs) elements
  int64_t a_rs, a_cs;
  const uint8_t* b;               // row kk at b + kk * b_rs elements
  int64_t b_rs;
  uint8_t* out;                   // row i at out + i * out_rs elements
  int64_t out_rs;
};

#define FOURFOLD_CPU_DECLARE(isa)                                                                        \
  namespace isa {                                                                                        \
  /* Statistics of x[0, n). With kept non-null (softmax_kept_floats(n) floats each) also keeps what the     \
     sum added: kept[i] = exp(x[i] - shift), and each block's shift in `shifts`, for softmax_write_kept. */ \
  RowStats softmax_stats(const void* x, RowType type, int64_t n, float* kept, float* shifts);            \
  /* out[i] = kept[i] * exp(shift - max) * scale: softmax's write pass with one exp per block, not per     \
     element; nan: every element NaN. */                                                                 \
  void softmax_write_kept(const float* kept, const float* shifts, void* out, RowType type, int64_t n, float max, \
                          float scale, bool nan);                                                         \
  /* out[i] = exp(x[i] - max) * scale (softmax; scale = 1 / sum) or x[i] - max - scale (log_softmax;     \
     scale = log(sum)), for i in [0, n); nan: every element NaN. */                                      \
  void softmax_write(const void* x, void* out, RowType type, int64_t n, float max, float scale, bool log, \
                     bool nan);                                                                          \
  /* y[i] = exp(x[i]) with the vectorized exp softmax uses (tests measure its error). */                 \
  void exp_f32(const float* x, float* y, int64_t n);                                                     \
  /* GEMM pieces (kernels/gemm.cpp): the register tile is gemm_mr() rows by gemm_nr() columns. */        \
  int gemm_mr();                                                                                         \
  int gemm_nr();                                                                                         \
  /* Packs a[m0 .. m0+mc, k0 .. k0+kc] as ceil(mc/mr) panels, each kc steps of mr floats (zero padded). */ \
  void gemm_pack_a(const GemmOperand& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, float* dst);    \
  /* Packs b[k0 .. k0+kc, n0 .. n0+nc] as ceil(nc/nr) panels, each kc steps of nr floats (zero padded). */ \
  void gemm_pack_b(const GemmOperand& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst);    \
  /* c[mc, nc] (row stride ldc) = (accumulate ? c : 0) + packed a * packed b over kc. */                 \
  void gemm_block(const float* pa, const float* pb, int64_t mc, int64_t nc, int64_t kc, float* c,         \
                  int64_t ldc, bool accumulate);                                                          \
  /* out(m0 + i, n0 + j) = round(c[i * ldc + j] + bias[n0 + j]) for i < mc, j < nc. */                    \
  void gemm_store(const float* c, int64_t ldc, int64_t mc, int64_t nc, const GemmOut& out, int64_t m0,    \
                  int64_t n0);                                                                            \
  /* The bf16 pair path: both operands bf16, packed as uint32 (k, k+1) pairs (ceil(kc/2) steps per panel);  \
     gemm_pairs_fast(): this level has vdpbf16ps (elsewhere the path is f32 FMAs, for tests). */           \
  bool gemm_pairs_fast();                                                                                \
  void gemm_pack_a_pairs(const GemmOperand& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, float* dst); \
  void gemm_pack_b_pairs(const GemmOperand& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst); \
  void gemm_block_pairs(const float* pa, const float* pb, int64_t mc, int64_t nc, int64_t kc, float* c,   \
                        int64_t ldc, bool accumulate);                                                    \
  /* The AMX path (gemm_amx.cpp) for the same bf16 problems, where gemm_amx_fast(): a row-major bf16 A block \
     (rows padded to 16, depth to 32, zeros), and B as pair panels of nr columns whose steps are padded to  \
     16 (one tile's rows); elsewhere the block is a scalar emulation, for tests. */                        \
  bool gemm_amx_fast();                                                                                  \
  void gemm_pack_a_amx(const GemmOperand& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, float* dst); \
  void gemm_pack_b_amx(const GemmOperand& b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst); \
  void gemm_block_amx(const float* pa, const float* pb, int64_t mc, int64_t nc, int64_t kc, float* c,     \
                      int64_t ldc, bool accumulate);                                                      \
  /* The direct path for few rows (MoE experts; gemm_direct.cpp): the weight's rows (b = W^T, K contiguous; \
     bf16, or fp8 decoded to bf16 a chunk at a time, its scale applied to each chunk's sums) are read as    \
     they lie, unpacked (AMX tiles, or broadcast pairs for vdpbf16ps), and a's rows (bf16, or               \
     f32 split into three exact bf16 terms) the packed operand (gemm_pack_direct, once for every column     \
     tile); c[rows, n1 - n0] = the whole-K result. gemm_direct_fast(): this level has a fast block (amx,   \
     avx512bf16; elsewhere a scalar emulation, for tests). */                                             \
  bool gemm_direct_fast();                                                                               \
  void gemm_pack_direct_rows(const GemmOperand& b, int64_t k, int64_t nc, float* dst);                   \
  bool gemm_direct_covers(const GemmOperand& a, const GemmOperand& b, int64_t rows, int64_t cols, int64_t k); \
  /* The most rows of a (of this type, depth k) whose packed terms the level's direct path keeps in L2. */   \
  int64_t gemm_direct_max_rows(RowType a, int64_t k);                                                    \
  void gemm_pack_direct(const GemmOperand& a, int64_t m0, int64_t rows, int64_t k, float* dst, float* split); \
  void gemm_tile_direct(const DirectRows& x, const GemmOperand& b, int64_t n0, int64_t n1, int64_t k,     \
                        float* c, int64_t ldc);                                                           \
  /* scaled_dot_product_attention: folds keys [key_begin, key_end) into the tile's running state. */    \
  void attention_tile(const AttnTile& tile);                                                             \
  /* grouped_mm, moe_experts: the whole tile t (k == 0 writes zeros). */                                 \
  void dot_tile(const DotTile& t);                                                                       \
  /* Small-M matmul: out[:, j] for the columns j in [n0, n1) (n1 - n0 <= kMatmulRowsTile floats' worth). */ \
  void matmul_rows(const MatmulRowsPlan& plan, int64_t n0, int64_t n1);                                  \
  /* Decode GEMV: writes out[:, n] for n in [n_begin, n_end), all m rows per weight row (streamed once). */ \
  void gemv_rows(const GemvPlan& plan, int64_t n_begin, int64_t n_end);                                  \
  /* Whether this level runs fp8 GEMV rows on bf16 pairs (vdpbf16ps, vpermi2b): then it reads plan.xp. */    \
  bool gemv_pairs_fast();                                                                                \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE)
#undef FOURFOLD_CPU_DECLARE

}  // namespace fourfold::cpu
