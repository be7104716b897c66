// The dedicated tier's packed GEMM driver, shared by linear (prefill), matmul/bmm and linear_backward:
// C = A B (+ bias) for a list of independent problems, all in one parallel region over output tiles.
#pragma once

#include <vector>

#include "backends/cpu/kernel_types.h"
#include "backends/cpu/kernels/kernels.h"
#include "fourfold/tensor.h"
#include "backends/op_args.h"

namespace fourfold::cpu {

// One ISA level's GEMM pieces (kernels/gemm.cpp).
struct GemmPieces {
  int (*mr)();
  int (*nr)();
  void (*pack_a)(const GemmOperand&, int64_t, int64_t, int64_t, int64_t, float*);
  void (*pack_b)(const GemmOperand&, int64_t, int64_t, int64_t, int64_t, float*);
  void (*block)(const float*, const float*, int64_t, int64_t, int64_t, float*, int64_t, bool);
  void (*store)(const float*, int64_t, int64_t, int64_t, const GemmOut&, int64_t, int64_t);
  // The bf16 pair path (vdpbf16ps), taken for problems whose operands are both bf16 when pairs_fast() says so.
  bool (*pairs_fast)();
  void (*pack_a_pairs)(const GemmOperand&, int64_t, int64_t, int64_t, int64_t, float*);
  void (*pack_b_pairs)(const GemmOperand&, int64_t, int64_t, int64_t, int64_t, float*);
  void (*block_pairs)(const float*, const float*, int64_t, int64_t, int64_t, float*, int64_t, bool);
  // The AMX path, taken for the same problems instead of the pair path when amx_fast() says so (the amx level).
  bool (*amx_fast)();
  void (*pack_a_amx)(const GemmOperand&, int64_t, int64_t, int64_t, int64_t, float*);
  void (*pack_b_amx)(const GemmOperand&, int64_t, int64_t, int64_t, int64_t, float*);
  void (*block_amx)(const float*, const float*, int64_t, int64_t, int64_t, float*, int64_t, bool);
  // The direct path (few rows against a bf16 or fp8 weight read where it lies), taken where direct_fast() says so.
  bool (*direct_fast)();
  bool (*direct_covers)(const GemmOperand&, const GemmOperand&, int64_t, int64_t, int64_t);
  int64_t (*direct_max_rows)(RowType, int64_t);
  void (*pack_direct)(const GemmOperand&, int64_t, int64_t, int64_t, float*, float*);
  void (*tile_direct)(const DirectRows&, const GemmOperand&, int64_t, int64_t, int64_t, float*, int64_t);
};

#define FOURFOLD_GEMM_PIECES(isa)                                                                           \
  cpu::GemmPieces {                                                                                         \
    &cpu::isa::gemm_mr, &cpu::isa::gemm_nr, &cpu::isa::gemm_pack_a, &cpu::isa::gemm_pack_b,                 \
        &cpu::isa::gemm_block, &cpu::isa::gemm_store, &cpu::isa::gemm_pairs_fast, &cpu::isa::gemm_pack_a_pairs,  \
        &cpu::isa::gemm_pack_b_pairs, &cpu::isa::gemm_block_pairs, &cpu::isa::gemm_amx_fast,                \
        &cpu::isa::gemm_pack_a_amx, &cpu::isa::gemm_pack_b_amx, &cpu::isa::gemm_block_amx,                  \
        &cpu::isa::gemm_direct_fast, &cpu::isa::gemm_direct_covers, &cpu::isa::gemm_direct_max_rows,           \
        &cpu::isa::gemm_pack_direct, &cpu::isa::gemm_tile_direct                                            \
  }

// A B operand that no strided view describes (conv's implicit im2col matrix, gathered from the input window):
// its packers write the panels gemm_pack_b / gemm_pack_b_pairs would write for the [k0, k0 + kc) x [n0, n0 + nc)
// block of it, from `source`.
struct PanelPacker {
  void (*pack)(const void* source, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst);
  void (*pack_pairs)(const void* source, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst);
  const void* source;
};

// out[m, n] = sum_k a[m, k] b[k, n] (+ bias[n], or bias[m] with out.bias_by_row); k == 0 gives the bias (or
// zeros).
struct GemmProblem {
  int64_t m, n, k;
  GemmOperand a;   // [m, k]
  GemmOperand b;   // [k, n]; with b_packer only its type counts (the pair path is taken when a and b are bf16)
  GemmOut out;     // [m, n]
  const PanelPacker* b_packer = nullptr;   // packs B instead of the pieces' pack_b, when set
};

void gemm(const std::vector<GemmProblem>& problems, const GemmPieces& pieces);

// The driver's tile, for callers that schedule tiles of their own (grouped_mm's groups, moe_experts' experts)
// and use the f32 result before it is stored: c[i * ldc + j] = sum_k a(m0 + i, k) b(k, n0 + j) over the tile
// [m0, m1) x [n0, n1) (zeros when k == 0), packing into this thread's scratch slots 0 and 1.
void gemm_tile_f32(const GemmProblem& g, int64_t m0, int64_t m1, int64_t n0, int64_t n1, float* c, int64_t ldc,
                   const GemmPieces& pieces);
// This thread's 64-byte aligned scratch of at least `count` floats in `slot` (0 and 1: the tile's packed
// panels; 2: gemm()'s result tile; the rest free for callers), kept between calls.
inline constexpr int kGemmScratchSlots = 6;
float* gemm_scratch(int slot, int64_t count);

// The operand view of a 2-D f32/bf16/f16/fp8 tensor (or of its transpose) and of an output with an optional bias.
GemmOperand operand(const Tensor& t, bool transposed = false);
// An fp8 tensor t [R, C] with its f32 dequantization scale in t's orientation, as op_args.h lays out a weight's
// [N, K] scale: tensorwise [1, 1], rowwise [R, 1], block_1x128 [R, ceil(C/128)], block_128x128 [ceil(R/128),
// ceil(C/128)]; transposed: the operand is t^T (with its scales).
GemmOperand operand(const Tensor& t, bool transposed, const Tensor& scale, ScaleRecipe recipe);
GemmOut output(Tensor& t, const Tensor* bias = nullptr);

}  // namespace fourfold::cpu
