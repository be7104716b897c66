// The sparse mixture-of-experts block of Qwen3-MoE (and models like it): router, top-k, the routed experts.
#pragma once

#include <cstdint>
#include <vector>

#include "fourfold/ops.h"   // OptTensor
#include "fourfold/tensor.h"

namespace fourfold {

// The experts of one MoE layer in checkpoint orientation ([out, in] per expert, experts stacked):
//   gate, up [E, I, H]; down [E, H, I]. bf16 or f32 (the dtype of x), or float8_e4m3fn with f32 block scales
//   [E, ceil(out/128), ceil(in/128)] (weight_scale_inv as stored: the element counts as weight * scale).
// The scales are present exactly when the weights are fp8. FP4 experts (NVFP4, MXFP4; see scaled_linear): gate,
// up float4_e2m1fn_x2 [E, I, H/2], down [E, H, I/2], their block scales float8_e4m3fn [E, out, in/16] or
// float8_e8m0fnu [E, out, in/32], and NVFP4's global scales f32 [E] (one per expert and projection) or none.
struct MoeExpertWeights {
  Tensor gate;
  Tensor up;
  Tensor down;
  OptTensor gate_scale, up_scale, down_scale;
  OptTensor gate_global, up_global, down_global;
  // Empty: expert e is entry e of the stacks. Else expert e is entry slot_of_expert[e] (a permutation): the
  // stacks are views of a checkpoint that stores experts in another order (transformers' name order 0, 1, 10,
  // 11, 2, ...), used in place instead of copied into expert order. moe_block routes to slots.
  std::vector<int64_t> slot_of_expert;
};

// Qwen3-MoE's sparse block: x [T, H], router_weight [E, H] (x's dtype) -> [T, H] in x's dtype:
//   logits = x @ router_weight^T; p = softmax(logits in float32); (w, idx) = topk(p, top_k);
//   if norm_topk_prob: w /= sum(w); out[t] = sum_j w_j * down_e(silu(gate_e(x_t)) * up_e(x_t)), e = idx_j.
// Composed from linear, softmax, topk, a host-side sort of the (token, expert) pairs by expert, and moe_experts.
// With w.slot_of_expert, each chosen expert is mapped to its slot before the sort (moe_experts sees slots).
Tensor moe_block(const Tensor& x, const Tensor& router_weight, const MoeExpertWeights& w, int64_t top_k,
                 bool norm_topk_prob);

// The routed experts over rows sorted by expert (the op the force policy attributes as "moe_experts"):
// row r (0 <= r < A) belongs to the expert e with offs[e-1] <= r < offs[e] and is token token_of_row[r]
// (int32 [A], in [0, T)) weighted by row_weight[r] (f32 [A]); offs int32 [E], non-decreasing, offs[E-1] == A.
//   out[t] = sum over rows r of token t: row_weight[r] * down_e(silu(gate_e(x_t)) * up_e(x_t))
// x [T, H] f32 or bf16; a token without rows gives zeros.
Tensor moe_experts(const Tensor& x, const MoeExpertWeights& w, const Tensor& token_of_row, const Tensor& row_weight,
                   const Tensor& offs);

}  // namespace fourfold
