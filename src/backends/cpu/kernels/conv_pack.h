// conv2d / conv3d's per-ISA B packers (conv_pack.cpp beside this file), which feed the packed GEMM.
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

// conv2d / conv3d as an implicit GEMM: per batch element, out[o, p] = sum_q w[o, q] col(q, p), where
// q = ((c * K0 + k0) * K1 + k1) * K2 + k2 runs over the input channels and kernel taps (the weight's own
// [O, C * K0 * K1 * K2] layout), p over the flattened output positions, and col(q, p) is the input element
// under tap q of output p's window (zero in the padding). The B panels are gathered from the input window
// while packing: no im2col matrix exists. conv2d is the kConvDims case with a leading dim of size 1.
inline constexpr int kConvDims = 3;
struct ConvGather {
  const uint8_t* x;                 // element [n, 0, 0, 0, 0] of this batch element's input
  RowType type;                     // f32, bf16 or f16
  int64_t c_stride;                 // elements between input channels
  int64_t in_size[kConvDims], in_stride[kConvDims];
  int64_t out_size[kConvDims];
  int64_t kernel[kConvDims], stride[kConvDims], padding[kConvDims], dilation[kConvDims];
};

#define FOURFOLD_CPU_DECLARE_CONV_PACK(isa)                                                                \
  namespace isa {                                                                                          \
  /* The panels gemm_pack_b (pairs: gemm_pack_b_pairs, bf16 only) would write for rows [k0, k0 + kc) and   \
     columns [n0, n0 + nc) of the implicit im2col matrix of `gather` (a ConvGather). */                    \
  void conv_pack_b(const void* gather, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst);        \
  void conv_pack_b_pairs(const void* gather, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst);  \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_CONV_PACK)
#undef FOURFOLD_CPU_DECLARE_CONV_PACK

}  // namespace fourfold::cpu
