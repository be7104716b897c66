// The generic tier's inner loops, compiled once per ISA level like the dedicated kernels (CMakeLists.txt,
// fourfold_cpu_isa) so that both tiers run at the same vector width: the generic tier is slower only by its
// structure (extra passes, temporaries, per-group loops), never because its loops were built for SSE2.
//
// Plain pointers and counts only: primitives.cpp (baseline-compiled) keeps the Tensor access and the threading
// and calls the active level's loops on each chunk (kernels.h says why the split).
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/kernels.h"   // RowType and the ISA list

namespace fourfold::generic {

enum class Unary { neg, exp, log, reciprocal, rsqrt, square, cube, erf, tanh, softplus };
enum class Binary { add, sub, mul, div };
enum class Broadcast { none, per_row, per_col };
enum class Reduce { max, sum };

#define FOURFOLD_GENERIC_DECLARE(isa)                                                                       \
  namespace isa {                                                                                           \
  /* y[i] = f(x[i]) for i in [0, n); y may alias x. exp is the dedicated tier's vectorized exp (<= 2 ulp). */ \
  void unary_loop(Unary op, const float* x, float* y, int64_t n);                                           \
  void affine_loop(const float* x, float scale, float shift, float* y, int64_t n);                          \
  /* Rows [r0, r1) of y = a op b over rows of `cols` floats (b as primitives.h's binary says). */            \
  void binary_rows(Binary op, const float* a, const float* b, Broadcast bc, float* y, int64_t r0, int64_t r1, \
                   int64_t cols);                                                                           \
  /* out[r] for rows [r0, r1): max (NaN ignored, -inf when empty) or sum in kLanes independent lanes. */     \
  void reduce_rows(Reduce op, const float* x, int64_t r0, int64_t r1, int64_t cols, float* out);            \
  /* n contiguous elements of a row converted to or from f32 (rounding to nearest even). */                  \
  void widen_row(cpu::RowType type, const void* src, float* dst, int64_t n);                                \
  void narrow_row(const float* src, cpu::RowType type, void* dst, int64_t n);                               \
  /* C[m0..m1, n0..n1] of C = A B^T (A [m, k], B [n, k], C row stride ldc), by dot products: the small-M   \
     GEMM (each B row read once for all rows of the tile). */                                               \
  void gemm_nt_dots(const float* a, const float* b, float* c, int64_t ldc, int64_t k, int64_t m0, int64_t m1, \
                    int64_t n0, int64_t n1);                                                                \
  /* C[m0..m1, n0..n1] of C = A B (A [m, k], B [k, n], C row stride n), as rows of B scaled and summed      \
     into registers: the small-M GEMM when B's rows, not its columns, are contiguous. n1 - n0 <= 64. */      \
  void gemm_nn_axpys(const float* a, const float* b, float* c, int64_t k, int64_t n, int64_t m0, int64_t m1,  \
                     int64_t n0, int64_t n1);                                                               \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_GENERIC_DECLARE)
#undef FOURFOLD_GENERIC_DECLARE

}  // namespace fourfold::generic
