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

// One row of rms_norm (kernels/rms_norm.cpp): h = x (+ residual), sum_out = h rounded to the row's type when
// given, out = h * (mean(h^2) + eps)^(-1/2) * weight. Pointers to element 0 of the row, elements contiguous;
// residual, weight and sum_out may be null.
struct RmsNormRow {
  const void* x;
  const void* residual;
  const void* weight;
  void* out;
  void* sum_out;
};

// One row of rotary_embedding (kernels/rotary.cpp): x and out [d] (out may be x), cos and sin [half].
struct RotaryRow {
  const void* x;
  const void* cos;
  const void* sin;
  void* out;
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
  /* ---- fused decoder helpers and softmax backward (rms_norm.cpp, rotary.cpp, silu_mul.cpp,            \
     softmax_backward.cpp) */                                                                            \
  void rms_norm_row(const RmsNormRow& row, RowType type, int64_t d, double eps);                         \
  /* Rotates the pairs of R = 2 * half elements, copies [R, d) when out is not x. */                      \
  void rotary_row(const RotaryRow& row, RowType type, int64_t half, int64_t d, bool interleaved);        \
  /* out[i] = gate[i] / (1 + exp(-gate[i])) * up[i]. */                                                  \
  void silu_mul(const void* gate, const void* up, void* out, RowType type, int64_t n);                   \
  /* sum(g * y) (softmax) or sum(g) (log_softmax) over [0, n), in double. */                             \
  double softmax_backward_dot(const void* g, const void* y, RowType type, int64_t n, bool log);          \
  /* gi = y * (g - dot) (softmax) or g - exp(y) * dot (log_softmax). */                                  \
  void softmax_backward_write(const void* g, const void* y, void* gi, RowType type, int64_t n, double dot, \
                              bool log);                                                                 \
  }
FOURFOLD_CPU_ISA_LIST(FOURFOLD_CPU_DECLARE)
#undef FOURFOLD_CPU_DECLARE

}  // namespace fourfold::cpu
