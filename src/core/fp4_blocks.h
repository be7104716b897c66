// FP4 weights with block scales, as every tier and the loaders read them: codes float4_e2m1fn_x2 [N, K/2] (two
// values a byte, the even column in the low nibble), one scale per block of a row, and for NVFP4 one f32 global
// scale. Element (n, k) counts as e2m1(n, k) * scale[n, k / block] * global.
//   NVFP4: float8_e4m3fn scales [N, K/16] and the global scale (a multiplier: compressed-tensors stores its
//          reciprocal as weight_global_scale, ModelOpt the multiplier as weight_scale_2).
//   MXFP4: float8_e8m0fnu scales [N, K/32] (powers of two), no global scale.
// e2m1 times either scale is exact in bf16 (at most 2 + 4 significant bits, exponents inside bf16's), so the
// kernels can form the products exactly; only the global scale rounds.
#pragma once

#include <cstdint>

#include "fourfold/tensor.h"

namespace fourfold {

// Values per block scale: 32 under float8_e8m0fnu (MXFP4) scales, 16 under float8_e4m3fn (NVFP4) ones.
inline int64_t fp4_block_size(DType scale_dtype) { return scale_dtype == DType::f8_e8m0fnu ? 32 : 16; }

// The scale code's value (e4m3fn or e8m0fnu; NaN codes give NaN).
float fp4_scale_value(DType scale_dtype, uint8_t code);

// The code of element k of a row of packed pairs whose bytes lie `stride` bytes apart.
inline uint8_t fp4_code(const uint8_t* row, int64_t stride, int64_t k) {
  return static_cast<uint8_t>(row[(k / 2) * stride] >> (4 * (k % 2)));
}

// The global scale as a float: element `index` of `global` (a one-element tensor, or one per expert), 1 when null.
float fp4_global_value(const Tensor* global, int64_t index = 0);

// Element (n, k) of weight [N, K/2] with its scale [N, K/block], or of expert e of [E, N, K/2] with [E, N, K/block]
// (e = 0 for the 2-D ones), any strides, times `global`, in double: exact.
double fp4_weight_at(const Tensor& weight, const Tensor& scale, float global, int64_t e, int64_t n, int64_t k);

// Rows [n0, n0 + count) of a 2-D weight as f32 into out[count, K] (contiguous): e2m1 * scale exactly, times the
// global scale rounded once.
void fp4_rows_f32(const Tensor& weight, const Tensor& scale, float global, int64_t n0, int64_t count, float* out);

}  // namespace fourfold
