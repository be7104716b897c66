// The routed experts of a MoE layer: moe_route sorts a router's top-k choice by expert (the rows moe_experts
// reads), moe_experts runs gate/up/down with SiLU over those rows, and moe_block does router, top-k and experts
// in one call (Qwen3-MoE's sparse block). Expert stacks may be views (transformers' fused gate_up_proj is
// passed as two halves); fp8 e4m3 experts come with their block scales.
#include <torch/library.h>

#include "fourfold/moe.h"
#include "tensor_bridge.h"

namespace fourfold_torch {
namespace {

// Counting sort of the T * k (token, expert) pairs by expert: row r is token token_of_row[r] with weight
// row_weight[r]; offs[e] is the end of expert e's rows. Choices of expert index `num_experts` (transformers'
// "no expert" slot under expert parallelism) are dropped.
std::tuple<at::Tensor, at::Tensor, at::Tensor> moe_route(const at::Tensor& top_k_index, const at::Tensor& top_k_weights,
                                                         int64_t num_experts) {
  const char* op = "moe_route";
  if (top_k_index.dim() != 2 || top_k_weights.sizes() != top_k_index.sizes())
    refuse(op, "top_k_weights", c10::str("the shape of 'top_k_index', [T, k] (", top_k_index.sizes(), ")"),
           c10::str(top_k_weights.sizes()));
  if (top_k_index.scalar_type() != at::kLong && top_k_index.scalar_type() != at::kInt)
    refuse(op, "top_k_index", "int64 or int32 expert indices",
           "torch." + std::string(c10::getDtypeNames(top_k_index.scalar_type()).first));
  if (num_experts < 1) refuse(op, "num_experts", "at least 1", std::to_string(num_experts));
  if (!top_k_index.device().is_cpu() || !top_k_weights.device().is_cpu())
    refuse(op, "top_k_index", "CPU tensors", top_k_index.device().str());
  // The routing is tiny (T * k entries): read as contiguous int64 / f32 copies.
  const at::Tensor index = top_k_index.to(at::kLong).contiguous();
  const at::Tensor weight = top_k_weights.to(at::kFloat).contiguous();
  const int64_t tokens = index.size(0), k = index.size(1);
  const int64_t* idx = index.data_ptr<int64_t>();
  const float* w = weight.data_ptr<float>();
  std::vector<int64_t> count(static_cast<size_t>(num_experts) + 1, 0);
  for (int64_t i = 0; i < tokens * k; ++i) {
    if (idx[i] < 0 || idx[i] > num_experts)
      refuse(op, "top_k_index", c10::str("expert indices in [0, ", num_experts, ")"), std::to_string(idx[i]));
    ++count[static_cast<size_t>(idx[i])];
  }
  at::Tensor offs = at::empty({num_experts}, at::kInt);
  std::vector<int64_t> next(static_cast<size_t>(num_experts), 0);
  int64_t end = 0;
  for (int64_t e = 0; e < num_experts; ++e) {
    next[static_cast<size_t>(e)] = end;
    end += count[static_cast<size_t>(e)];
    offs.data_ptr<int32_t>()[e] = static_cast<int32_t>(end);
  }
  at::Tensor token_of_row = at::empty({end}, at::kInt), row_weight = at::empty({end}, at::kFloat);
  for (int64_t i = 0; i < tokens * k; ++i) {
    if (idx[i] == num_experts) continue;
    const int64_t r = next[static_cast<size_t>(idx[i])]++;
    token_of_row.data_ptr<int32_t>()[r] = static_cast<int32_t>(i / k);
    row_weight.data_ptr<float>()[r] = w[i];
  }
  return {token_of_row, row_weight, offs};
}

fourfold::MoeExpertWeights expert_weights(const char* op, const at::Tensor& gate, const at::Tensor& up,
                                          const at::Tensor& down, const std::optional<at::Tensor>& gate_scale,
                                          const std::optional<at::Tensor>& up_scale,
                                          const std::optional<at::Tensor>& down_scale) {
  fourfold::MoeExpertWeights w;
  w.gate = weight_to_fourfold(gate, op, "gate");
  w.up = weight_to_fourfold(up, op, "up");
  w.down = weight_to_fourfold(down, op, "down");
  w.gate_scale = to_fourfold(gate_scale, op, "gate_scale");
  w.up_scale = to_fourfold(up_scale, op, "up_scale");
  w.down_scale = to_fourfold(down_scale, op, "down_scale");
  return w;
}

at::Tensor moe_experts(const at::Tensor& x, const at::Tensor& gate, const at::Tensor& up, const at::Tensor& down,
                       const at::Tensor& token_of_row, const at::Tensor& row_weight, const at::Tensor& offs,
                       const std::optional<at::Tensor>& gate_scale, const std::optional<at::Tensor>& up_scale,
                       const std::optional<at::Tensor>& down_scale) {
  const char* op = "moe_experts";
  return run_op([&] {
    return to_torch(fourfold::moe_experts(to_fourfold(x, op, "x"),
                                          expert_weights(op, gate, up, down, gate_scale, up_scale, down_scale),
                                          to_fourfold(token_of_row, op, "token_of_row"),
                                          to_fourfold(row_weight, op, "row_weight"), to_fourfold(offs, op, "offs")));
  });
}

at::Tensor moe_block(const at::Tensor& x, const at::Tensor& router_weight, const at::Tensor& gate, const at::Tensor& up,
                     const at::Tensor& down, int64_t top_k, bool norm_topk_prob,
                     const std::optional<at::Tensor>& gate_scale, const std::optional<at::Tensor>& up_scale,
                     const std::optional<at::Tensor>& down_scale) {
  const char* op = "moe_block";
  return run_op([&] {
    return to_torch(fourfold::moe_block(to_fourfold(x, op, "x"), weight_to_fourfold(router_weight, op, "router_weight"),
                                        expert_weights(op, gate, up, down, gate_scale, up_scale, down_scale), top_k,
                                        norm_topk_prob));
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(fourfold, m) {
  m.def("moe_route(Tensor top_k_index, Tensor top_k_weights, int num_experts) -> (Tensor, Tensor, Tensor)");
  m.def("moe_experts(Tensor x, Tensor gate, Tensor up, Tensor down, Tensor token_of_row, Tensor row_weight, "
        "Tensor offs, Tensor? gate_scale=None, Tensor? up_scale=None, Tensor? down_scale=None) -> Tensor");
  m.def("moe_block(Tensor x, Tensor router_weight, Tensor gate, Tensor up, Tensor down, int top_k, "
        "bool norm_topk_prob, Tensor? gate_scale=None, Tensor? up_scale=None, Tensor? down_scale=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(fourfold, CPU, m) {
  m.impl("moe_route", &moe_route);
  m.impl("moe_experts", &moe_experts);
  m.impl("moe_block", &moe_block);
}

}  // namespace fourfold_torch
