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

// ---- Decode GEMV (linear with M <= 8, scaled_linear, small-M scaled_mm): out[m, n] = sum_k x[m, k] * w(n, k).
inline constexpr int kGemvMaxM = 8;

// Stored weight element types; fp8 is converted to f32 in registers, never into a dequantized copy.
enum class GemvWeight : int { f32 = 0, bf16 = 1, f16 = 2, e4m3 = 3, e5m2 = 4 };

// K is summed in blocks of this many elements (per lane; 128 under 128-wide scale blocks), the blocks' sums
// then added (and scaled): long enough to amortize each block's bookkeeping, short enough for two-level sums.
inline constexpr int64_t kGemvKBlock = 512;
// A scale group spanning every n or every k (tensorwise, rowwise).
inline constexpr int64_t kGemvWholeGroup = INT64_C(1) << 62;

struct GemvPlan {
  int64_t m, n, k;                // 1 <= m <= kGemvMaxM
  const float* x;                 // [m, k] contiguous f32: the activations, converted (and scaled) once
  const uint8_t* w;               // weight element (0, 0); row n starts w_row_bytes * n later, k contiguous
  int64_t w_row_bytes;
  GemvWeight w_type;
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
  /* Decode GEMV: writes out[:, n] for n in [n_begin, n_end), all m rows per weight row (streamed once). */ \
  void gemv_rows(const GemvPlan& plan, int64_t n_begin, int64_t n_end);                                  \
  }
FOURFOLD_CPU_ISA_LIST(FOURFOLD_CPU_DECLARE)
#undef FOURFOLD_CPU_DECLARE

}  // namespace fourfold::cpu
