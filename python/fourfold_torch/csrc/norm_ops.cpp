// rms_norm, the decoder's fused residual add + rms_norm, and the VAE's channel_rms_norm (with SiLU fused).
#include <torch/library.h>

#include "tensor_bridge.h"

namespace fourfold_torch {
namespace {

at::Tensor rms_norm(const at::Tensor& x, c10::IntArrayRef normalized_shape, const std::optional<at::Tensor>& weight,
                    std::optional<double> eps) {
  return run_op([&] {
    return to_torch(fourfold::rms_norm(to_fourfold(x, "rms_norm", "x"), int_list(normalized_shape),
                                       to_fourfold(weight, "rms_norm", "weight"), eps));
  });
}

std::tuple<at::Tensor, at::Tensor> add_rms_norm(const at::Tensor& x, const at::Tensor& residual,
                                                c10::IntArrayRef normalized_shape,
                                                const std::optional<at::Tensor>& weight, std::optional<double> eps) {
  return run_op([&] {
    auto [normed, sum] = fourfold::add_rms_norm(to_fourfold(x, "add_rms_norm", "x"),
                                                to_fourfold(residual, "add_rms_norm", "residual"),
                                                int_list(normalized_shape), to_fourfold(weight, "add_rms_norm", "weight"),
                                                eps);
    return std::make_tuple(to_torch(normed), to_torch(sum));
  });
}

at::Tensor channel_rms_norm(const at::Tensor& x, const std::optional<at::Tensor>& weight, double eps, bool silu) {
  return run_op([&] {
    return to_torch(fourfold::channel_rms_norm(to_fourfold(x, "channel_rms_norm", "x"),
                                               to_fourfold(weight, "channel_rms_norm", "weight"), eps, silu));
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(fourfold, m) {
  m.def("rms_norm(Tensor x, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor");
  m.def("add_rms_norm(Tensor x, Tensor residual, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> "
        "(Tensor, Tensor)");
  m.def("channel_rms_norm(Tensor x, Tensor? weight, float eps, bool silu=False) -> Tensor");
}

TORCH_LIBRARY_IMPL(fourfold, CPU, m) {
  m.impl("rms_norm", &rms_norm);
  m.impl("add_rms_norm", &add_rms_norm);
  m.impl("channel_rms_norm", &channel_rms_norm);
}

}  // namespace fourfold_torch
