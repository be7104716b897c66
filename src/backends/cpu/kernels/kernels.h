// The per-ISA kernels of the dedicated CPU tier: plain-data plans in, one declaration set per ISA namespace.
//
// Each kernels/*.cpp is compiled once per ISA (CMakeLists.txt, fourfold_cpu_isa) with
// FOURFOLD_ISA_NAMESPACE set to the level's name and that level's -m flags. Those files include only this
// header and the C/C++ library: an inline function from a shared header (Tensor, std::function, ...) compiled
// with -mavx512f could be the copy the linker keeps for every caller, so the planning, the Tensor access and
// the threading stay in the baseline-compiled callers (../constant_pad_nd.cpp, ../softmax.cpp).
#pragma once

#include <cstdint>

namespace fourfold::cpu {

inline constexpr int kPadMaxRank = 8;

// constant_pad_nd after dims are coalesced: the output (contiguous) is rows of out_size[rank-1] elements;
// dim d of the output maps to input index o - before[d] when that lies in [0, in_size[d]).
struct PadPlan {
  int rank;                       // >= 1
  int elem_size;                  // 1, 2, 4 or 8 bytes
  int64_t out_size[kPadMaxRank];
  int64_t in_size[kPadMaxRank];
  int64_t before[kPadMaxRank];    // negative: cropped
  int64_t in_stride[kPadMaxRank]; // elements
  const uint8_t* in;              // element [0, ..., 0] of the input
  uint8_t* out;                   // element [0, ..., 0] of the output
  uint64_t fill;                  // the fill value's bytes (low elem_size bytes)
  // -1, or an outer dim whose input stride is 1 while the row's is not (channels-last): then the work items
  // are tiles of kPadTileBytes / elem_size consecutive rows along that dim, read across and written along.
  int tile_dim;
};

// Bytes of input per row index in one tile of the tiled layout: a tile is kPadTileBytes / elem_size rows.
inline constexpr int64_t kPadTileBytes = 64;

// Element types of softmax rows.
enum class RowType : int { f32 = 0, bf16 = 1, f16 = 2 };

// One chunk's online statistics: max over the chunk, and sum of exp(x - max); nan when a NaN was seen.
struct RowStats {
  float max;
  double sum;
  bool nan;
};

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

#define FOURFOLD_CPU_ISA_LIST(X) X(avx512bf16) X(avx512) X(avx2) X(scalar)

#define FOURFOLD_CPU_DECLARE(isa)                                                                        \
  namespace isa {                                                                                        \
  /* Writes work items [begin, end) of the plan (rows, or tiles), each element once. */                                \
  void pad_rows(const PadPlan& plan, int64_t row_begin, int64_t row_end);                                \
  /* Statistics of x[0, n). */                                                                           \
  RowStats softmax_stats(const void* x, RowType type, int64_t n);                                        \
  /* out[i] = exp(x[i] - max) * scale (softmax; scale = 1 / sum) or x[i] - max - scale (log_softmax;     \
     scale = log(sum)), for i in [0, n); nan: every element NaN. */                                      \
  void softmax_write(const void* x, void* out, RowType type, int64_t n, float max, float scale, bool log, \
                     bool nan);                                                                          \
  /* y[i] = exp(x[i]) with the vectorized exp softmax uses (tests measure its error). */                 \
  void exp_f32(const float* x, float* y, int64_t n);                                                     \
  /* grouped_mm, moe_experts: the whole tile t (k == 0 writes zeros). */                                 \
  void dot_tile(const DotTile& t);                                                                       \
  }
FOURFOLD_CPU_ISA_LIST(FOURFOLD_CPU_DECLARE)
#undef FOURFOLD_CPU_DECLARE

}  // namespace fourfold::cpu
