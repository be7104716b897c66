// linear (decode GEMV with fused bias, the packed GEMM above it) and scaled_linear (FP8 weights with their
// dequantization scales, as Hugging Face FP8 checkpoints store them).
#include <torch/library.h>

#include "tensor_bridge.h"

namespace fourfold_torch {
namespace {

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias) {
  return run_op([&] {
    return to_torch(fourfold::linear(to_fourfold(x, "linear", "x"), weight_to_fourfold(weight, "linear", "weight"),
                                     to_fourfold(bias, "linear", "bias")));
  });
}

at::Tensor scaled_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& weight_scale,
                         const std::optional<at::Tensor>& bias) {
  return run_op([&] {
    return to_torch(fourfold::scaled_linear(to_fourfold(x, "scaled_linear", "x"),
                                            weight_to_fourfold(weight, "scaled_linear", "weight"),
                                            to_fourfold(weight_scale, "scaled_linear", "weight_scale"),
                                            to_fourfold(bias, "scaled_linear", "bias")));
  });
}

at::Tensor silu_mul(const at::Tensor& gate, const at::Tensor& up) {
  return run_op([&] {
    return to_torch(fourfold::silu_mul(to_fourfold(gate, "silu_mul", "gate"), to_fourfold(up, "silu_mul", "up")));
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(fourfold, m) {
  m.def("linear(Tensor x, Tensor weight, Tensor? bias=None) -> Tensor");
  m.def("scaled_linear(Tensor x, Tensor weight, Tensor weight_scale, Tensor? bias=None) -> Tensor");
  m.def("silu_mul(Tensor gate, Tensor up) -> Tensor");
}

TORCH_LIBRARY_IMPL(fourfold, CPU, m) {
  m.impl("linear", &linear);
  m.impl("scaled_linear", &scaled_linear);
  m.impl("silu_mul", &silu_mul);
}

}  // namespace fourfold_torch
