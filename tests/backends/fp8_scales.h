// Scale tensors for scaled_mm tests, one per recipe, in the layouts ops.h gives them, and the tolerance of an
// FP8 product against the reference: shared by the decode (GEMV) and prefill (packed GEMM) scaled_mm tests.
#pragma once

#include "support/test_support.h"

namespace fourfold::fp8_scales {

inline int64_t blocks(int64_t n) { return (n + 127) / 128; }

inline constexpr ScaleRecipe kRecipes[] = {ScaleRecipe::tensorwise, ScaleRecipe::rowwise, ScaleRecipe::block_1x128,
                                           ScaleRecipe::block_128x128};

// In a's [M, K] orientation.
inline Tensor scale_a(ScaleRecipe r, int64_t m, int64_t k, uint64_t seed) {
  switch (r) {
    case ScaleRecipe::tensorwise: return Tensor::from_vector({0.75}, {}, DType::f32);
    case ScaleRecipe::rowwise: return testing::rand_uniform({m, 1}, DType::f32, seed, 0.25, 2.0);
    case ScaleRecipe::block_1x128: return testing::rand_uniform({m, blocks(k)}, DType::f32, seed, 0.25, 2.0);
    default: return testing::rand_uniform({blocks(m), blocks(k)}, DType::f32, seed, 0.25, 2.0);
  }
}

// In b's [K, N] orientation; the 128x128 grid as a checkpoint stores it ([nb, kb]) and passes it transposed.
inline Tensor scale_b(ScaleRecipe r, int64_t k, int64_t n, uint64_t seed) {
  switch (r) {
    case ScaleRecipe::tensorwise: return Tensor::from_vector({1.25}, {1}, DType::f32);
    case ScaleRecipe::rowwise: return testing::rand_uniform({1, n}, DType::f32, seed, 0.25, 2.0);
    case ScaleRecipe::block_1x128: return testing::rand_uniform({blocks(k), n}, DType::f32, seed, 0.25, 2.0);
    default: return testing::rand_uniform({blocks(n), blocks(k)}, DType::f32, seed, 0.25, 2.0).transpose(0, 1);
  }
}

// f32 accumulation of a few hundred terms of size ~1: up to ~1e-4 absolute; a bf16 / f16 output rounded from
// that f32 sum may land one ulp (2^-8 / 2^-11 relative) from the rounded exact sum.
inline testing::Tolerance tolerance(DType out) {
  switch (out) {
    case DType::f32: return {1e-5, 1e-4};
    case DType::f16: return {1e-3, 1e-3};
    default: return {8e-3, 1e-3};
  }
}

}  // namespace fourfold::fp8_scales
