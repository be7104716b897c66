// moe_block and moe_experts (fourfold/moe.h): argument checks, the router and the host-side sort by expert,
// then the moe_experts dispatch.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/fp4_blocks.h"
#include "fourfold/moe.h"
#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

constexpr const char* kExperts = "moe_experts";
constexpr const char* kBlock = "moe_block";

int64_t blocks_of(int64_t n) { return (n + 127) / 128; }

// One of gate / up / down: [E, out, in] in x's dtype, or fp8 e4m3fn with f32 scales [E, ceil(out/128), ceil(in/128)].
// An FP4 projection [E, out, in/2] with its block scale [E, out, in/block] and global scale [E] (or none).
void check_fp4_weight(const char* op, const std::string& name, const Tensor& w, const OptTensor& scale,
                      const OptTensor& global, int64_t experts, int64_t out_size, int64_t in_size) {
  const std::string scale_name = name + "_scale", global_name = name + "_global";
  check::size_is(op, name.c_str(), w, 0, experts, "E, the number of experts");
  check::size_is(op, name.c_str(), w, 1, out_size, "its output size");
  check::size_is(op, name.c_str(), w, 2, in_size / 2, "half its input size (two FP4 values a byte)");
  if (!scale)
    fail<ValueError>(op, scale_name, fmt::format("a block scale for the float4_e2m1fn_x2 '{}'", name), "none");
  check::on_cpu(op, scale_name.c_str(), *scale);
  check::dtype_in(op, scale_name.c_str(), *scale, {DType::f8_e4m3fn, DType::f8_e8m0fnu});
  const int64_t block = fp4_block_size(scale->dtype());
  if (in_size % block != 0)
    fail<ShapeError>(op, name, fmt::format("an input size that is a multiple of {} (the block of {} scales)", block,
                                           dtype_name(scale->dtype())),
                     fmt::format("{}", in_size));
  const Shape expected{experts, out_size, in_size / block};
  if (scale->shape() != expected)
    fail<ShapeError>(op, scale_name, fmt::format("shape {}", shape_string(expected)), fmt::format("shape {}", shape_string(scale->shape())));
  if (global) {
    check::on_cpu(op, global_name.c_str(), *global);
    check::dtype_in(op, global_name.c_str(), *global, {DType::f32});
    if (global->shape() != Shape{experts})
      fail<ShapeError>(op, global_name, fmt::format("shape [{}] (one per expert)", experts),
                       fmt::format("shape {}", shape_string(global->shape())));
  }
}

void check_weight(const char* op, const char* name, const char* scale_name, const Tensor& w, const OptTensor& scale,
                  const Tensor& x, int64_t experts, int64_t out_size, int64_t in_size, const char* layout,
                  const OptTensor& global = std::nullopt) {
  check::defined(op, name, w);
  check::on_cpu(op, name, w);
  check::rank(op, name, w, 3, layout);
  if (is_fp4(w.dtype())) return check_fp4_weight(op, name, w, scale, global, experts, out_size, in_size);
  if (global) fail<ValueError>(op, std::string(name) + "_global", fmt::format("no global scale: '{}' is not FP4", name), "a tensor");
  check::size_is(op, name, w, 0, experts, "E, the number of experts");
  check::size_is(op, name, w, 1, out_size, "its output size");
  check::size_is(op, name, w, 2, in_size, "its input size");
  if (w.dtype() == DType::f8_e4m3fn) {
    if (!scale)
      fail<ValueError>(op, scale_name, fmt::format("an f32 block scale for the float8_e4m3fn '{}'", name), "none");
    check::on_cpu(op, scale_name, *scale);
    check::dtype_in(op, scale_name, *scale, {DType::f32});
    check::rank(op, scale_name, *scale, 3, "[E, ceil(out/128), ceil(in/128)]");
    check::size_is(op, scale_name, *scale, 0, experts, "E, the number of experts");
    check::size_is(op, scale_name, *scale, 1, blocks_of(out_size), "ceil(out/128)");
    check::size_is(op, scale_name, *scale, 2, blocks_of(in_size), "ceil(in/128)");
    return;
  }
  // As linear: x's dtype, or bf16/f16 storage under f32 x (weight-only low precision for decode).
  const bool low_precision_storage =
      x.dtype() == DType::f32 && (w.dtype() == DType::bf16 || w.dtype() == DType::f16);
  if (w.dtype() != x.dtype() && !low_precision_storage)
    fail<DTypeError>(op, name,
                     fmt::format("dtype {} (that of 'x'), float8_e4m3fn, or bf16/f16 under float32 'x'",
                                 dtype_name(x.dtype())),
                     std::string(dtype_name(w.dtype())));
  if (scale) fail<ValueError>(op, scale_name, fmt::format("no scale: '{}' is not fp8", name), "a scale tensor");
}

struct Sizes {
  int64_t experts, hidden, inter;
};

Sizes check_experts(const char* op, const Tensor& x, const MoeExpertWeights& w) {
  check::defined(op, "x", x);
  check::on_cpu(op, "x", x);
  check::dtype_in(op, "x", x, {DType::f32, DType::bf16, DType::f64});
  check::rank(op, "x", x, 2, "[T, H]");
  check::defined(op, "gate", w.gate);
  check::rank(op, "gate", w.gate, 3, "[E, I, H]");
  const Sizes s{w.gate.size(0), x.size(1), w.gate.size(1)};
  check_weight(op, "gate", "gate_scale", w.gate, w.gate_scale, x, s.experts, s.inter, s.hidden, "[E, I, H]", w.gate_global);
  check_weight(op, "up", "up_scale", w.up, w.up_scale, x, s.experts, s.inter, s.hidden, "[E, I, H]", w.up_global);
  check_weight(op, "down", "down_scale", w.down, w.down_scale, x, s.experts, s.hidden, s.inter, "[E, H, I]", w.down_global);
  // The kernels take FP4 experts whole: all three projections, or none.
  if (is_fp4(w.gate.dtype()) != is_fp4(w.up.dtype()) || is_fp4(w.gate.dtype()) != is_fp4(w.down.dtype()))
    fail<DTypeError>(op, "up", "FP4 in all of gate, up and down, or in none",
                     fmt::format("gate {}, up {}, down {}", dtype_name(w.gate.dtype()), dtype_name(w.up.dtype()),
                                 dtype_name(w.down.dtype())));
  return s;
}

const Tensor* opt_ptr(const OptTensor& t) { return t ? &*t : nullptr; }

Tensor run_experts(const Tensor& x, const MoeExpertWeights& w, const Tensor& rows, const Tensor& weights,
                   const Tensor& offs) {
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  FOURFOLD_DISPATCH(moe_experts, (MoeExpertsArgs{x, w.gate, w.up, w.down, opt_ptr(w.gate_scale), opt_ptr(w.up_scale),
                                                 opt_ptr(w.down_scale), rows, weights, offs, out, opt_ptr(w.gate_global),
                                                 opt_ptr(w.up_global), opt_ptr(w.down_global)}));
  return out;
}

}  // namespace

Tensor moe_experts(const Tensor& x, const MoeExpertWeights& w, const Tensor& token_of_row, const Tensor& row_weight,
                   const Tensor& offs) {
  const Sizes s = check_experts(kExperts, x, w);
  check::on_cpu(kExperts, "token_of_row", token_of_row);
  check::dtype_in(kExperts, "token_of_row", token_of_row, {DType::i32});
  check::rank(kExperts, "token_of_row", token_of_row, 1, "[A]");
  const int64_t rows = token_of_row.size(0);
  check::on_cpu(kExperts, "row_weight", row_weight);
  check::dtype_in(kExperts, "row_weight", row_weight, {DType::f32});
  check::rank(kExperts, "row_weight", row_weight, 1, "[A]");
  check::size_is(kExperts, "row_weight", row_weight, 0, rows, "A, the rows of 'token_of_row'");
  check::on_cpu(kExperts, "offs", offs);
  check::dtype_in(kExperts, "offs", offs, {DType::i32});
  check::rank(kExperts, "offs", offs, 1, "[E]");
  check::size_is(kExperts, "offs", offs, 0, s.experts, "E, the number of experts");
  // The values are read here so that every kernel may trust them.
  const std::vector<double> ends = offs.to_vector();
  double previous = 0;
  for (size_t e = 0; e < ends.size(); ++e) {
    if (ends[e] < previous)
      fail<ValueError>(kExperts, "offs", "non-negative, non-decreasing offsets", fmt::format("offs[{}] = {}", e, ends[e]));
    previous = ends[e];
  }
  if (previous != static_cast<double>(rows))
    fail<ValueError>(kExperts, "offs", fmt::format("offs[E-1] == {} (the rows of 'token_of_row')", rows),
                     fmt::format("{}", previous));
  for (double t : token_of_row.to_vector())
    if (t < 0 || t >= static_cast<double>(x.size(0)))
      fail<ValueError>(kExperts, "token_of_row", fmt::format("tokens in [0, {})", x.size(0)), fmt::format("{}", t));
  return run_experts(x, w, token_of_row, row_weight, offs);
}

Tensor moe_block(const Tensor& x, const Tensor& router_weight, const MoeExpertWeights& w, int64_t top_k,
                 bool norm_topk_prob) {
  const Sizes s = check_experts(kBlock, x, w);
  check::defined(kBlock, "router_weight", router_weight);
  if (!(x.dtype() == DType::f32 && (router_weight.dtype() == DType::bf16 || router_weight.dtype() == DType::f16)))
    check::same_dtype(kBlock, "router_weight", router_weight, "x", x);
  check::rank(kBlock, "router_weight", router_weight, 2, "[E, H]");
  check::size_is(kBlock, "router_weight", router_weight, 0, s.experts, "E, the experts of 'gate'");
  check::size_is(kBlock, "router_weight", router_weight, 1, s.hidden, "H, dim 1 of 'x'");
  if (top_k < 1 || top_k > s.experts)
    fail<ValueError>(kBlock, "top_k", fmt::format("1 <= top_k <= {} (the experts)", s.experts), fmt::format("{}", top_k));
  const int64_t tokens = x.size(0);
  // Router: logits in x's dtype (as the checkpoint's nn.Linear), softmax and top-k in float32.
  const Tensor logits = linear(x, router_weight).to(x.dtype() == DType::f64 ? DType::f64 : DType::f32);
  const auto [values, indices] = topk(softmax(logits, -1), top_k, -1);
  const std::vector<double> p = values.to_vector();
  std::vector<double> idx = indices.to_vector();
  if (!w.slot_of_expert.empty()) {
    if (static_cast<int64_t>(w.slot_of_expert.size()) != s.experts)
      fail<ValueError>(kBlock, "slot_of_expert", fmt::format("{} slots (the experts)", s.experts),
                       fmt::format("{}", w.slot_of_expert.size()));
    for (int64_t slot : w.slot_of_expert)
      if (slot < 0 || slot >= s.experts)
        fail<ValueError>(kBlock, "slot_of_expert", fmt::format("slots in [0, {})", s.experts), fmt::format("{}", slot));
    for (double& e : idx) e = static_cast<double>(w.slot_of_expert[static_cast<size_t>(e)]);
  }

  // Sort the (token, expert) pairs by expert (stable: tokens ascending within an expert) on the host.
  std::vector<int64_t> counts(static_cast<size_t>(s.experts), 0);
  for (double e : idx) ++counts[static_cast<size_t>(e)];
  std::vector<double> ends(counts.size());
  std::vector<int64_t> next(counts.size());
  int64_t total = 0;
  for (size_t e = 0; e < counts.size(); ++e) {
    next[e] = total;
    ends[e] = static_cast<double>(total += counts[e]);
  }
  std::vector<double> token_of_row(static_cast<size_t>(total)), row_weight(static_cast<size_t>(total));
  for (int64_t t = 0; t < tokens; ++t) {
    double sum = 0;
    for (int64_t j = 0; j < top_k; ++j) sum += p[static_cast<size_t>(t * top_k + j)];
    for (int64_t j = 0; j < top_k; ++j) {
      const size_t i = static_cast<size_t>(t * top_k + j);
      const int64_t r = next[static_cast<size_t>(idx[i])]++;
      token_of_row[static_cast<size_t>(r)] = static_cast<double>(t);
      row_weight[static_cast<size_t>(r)] = norm_topk_prob ? p[i] / sum : p[i];
    }
  }
  return run_experts(x, w, Tensor::from_vector(token_of_row, {total}, DType::i32),
                     Tensor::from_vector(row_weight, {total}, DType::f32),
                     Tensor::from_vector(ends, {s.experts}, DType::i32));
}

}  // namespace fourfold
