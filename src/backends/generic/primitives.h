// The generic tier's primitive ops: plain, threaded passes over contiguous float32 buffers (plus the dtype
// conversions, fill and strided copy at the edges), from which every generic kernel is composed.
#pragma once

#include <cstdint>

#include "backends/generic/kernels/loops.h"   // the Unary, Binary, Broadcast and Reduce ops
#include "fourfold/tensor.h"
#include "backends/op_args.h"

namespace fourfold::generic {

// Elements per parallel_for chunk below which a pass stays on one thread: forking costs more than it saves.
inline constexpr int64_t kGrainElements = 1 << 15;

// The dtypes the generic float kernels compute (in f32): f32, bf16, f16. f64 is the oracle's own.
bool computes(DType dtype);

// A new contiguous f32 tensor (from the allocator, so temporaries show up in its statistics).
Tensor empty_f32(const Shape& shape);

// x (f32, bf16 or f16, any strides, stride-0 broadcasts included) as a contiguous f32 tensor of x's shape;
// x itself when it already is one.
Tensor to_f32(const Tensor& x);
// An fp8 weight [N, K] (any strides) times its dequantization scale ([1, 1], [N, 1], 1x128 blocks
// [N, ceil(K/128)] or 128x128 blocks [ceil(N/128), ceil(K/128)]), as a contiguous f32 tensor.
Tensor dequantize_f32(const Tensor& weight, const Tensor& scale, ScaleRecipe recipe);
// An FP4 weight [N, K/2] with its block scale and global scale dequantized into an f32 [N, K] copy
// (core/fp4_blocks.h: the e2m1 x scale products exact, the global scale rounding once).
Tensor dequantize_fp4_f32(const Tensor& weight, const Tensor& scale, float global);
// Converts src (contiguous f32 of out's shape) into out (f32, bf16 or f16, any strides), rounding once.
void from_f32(const Tensor& src, Tensor& out);

// Same-dtype strided copy, bytes moved as they are (NaN payloads survive); src broadcasts to dst's shape.
void copy(const Tensor& src, Tensor& dst);
// Every element of t (any dtype, any strides) set to `value` converted once to t's dtype.
void fill(Tensor& t, double value);

// y[i] = f(x[i]) over n contiguous floats; y may alias x. exp is the dedicated tier's vectorized exp (<= 2 ulp).
void unary(Unary op, const float* x, float* y, int64_t n);
// y[i] = x[i] * scale + shift.
void affine(const float* x, float scale, float shift, float* y, int64_t n);

// y = a op b over [rows, cols]: b is [rows, cols] (none), one value per row [rows] (per_row), or one value
// per column [cols] (per_col).
void binary(Binary op, const float* a, const float* b, Broadcast broadcast, float* y, int64_t rows, int64_t cols);

// out[r] = reduce(x[r, :]) over [rows, cols]; max of an empty row is -inf, sum of one is 0. The max ignores
// NaN (the softmax passes after it propagate it anyway).
void row_reduce(Reduce op, const float* x, int64_t rows, int64_t cols, float* out);

// C[M, N] = A[M, K] * B[N, K]^T for each of `batches` contiguous batches ([batches, M, K] etc.), all
// row-major f32, every batch in one parallel region (bmm, as a graph lowering calls it): the dedicated tier's
// packed GEMM (as a lowering calls the best BLAS it has), and dot products for M <= kGemmDotRows, where a
// register tile of 12 rows would mostly multiply padding.
inline constexpr int64_t kGemmDotRows = 8;
void gemm_nt(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t batches = 1);
// The same with B as [K, N] (matmul's layout, attention's V): C = A[M, K] * B[K, N] per batch.
void gemm_nn(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t batches = 1);

}  // namespace fourfold::generic
