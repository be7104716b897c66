// The video VAE's ops: constant_pad_nd, conv2d / conv3d, causal_conv3d (the causal pad and the conv in one
// call) and upsample_nearest.
#include <torch/library.h>

#include "tensor_bridge.h"

namespace fourfold_torch {
namespace {

at::Tensor constant_pad_nd(const at::Tensor& x, c10::IntArrayRef pad, double value) {
  return run_op([&] {
    return to_torch(fourfold::constant_pad_nd(to_fourfold(x, "constant_pad_nd", "x"), int_list(pad), value));
  });
}

using ConvFn = fourfold::Tensor (*)(const fourfold::Tensor&, const fourfold::Tensor&, const fourfold::OptTensor&,
                                    std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>, int64_t);

// conv2d and conv3d: the same call, fourfold's op of the rank.
template <ConvFn Conv>
at::Tensor conv(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups) {
  const char* op = Conv == &fourfold::conv2d ? "conv2d" : "conv3d";
  return run_op([&] {
    return to_torch(Conv(to_fourfold(x, op, "x"), weight_to_fourfold(weight, op, "weight"), to_fourfold(bias, op, "bias"),
                         int_list(stride), int_list(padding), int_list(dilation), groups));
  });
}

// pad: constant_pad_nd's pairs from the last dim backwards, then conv3d without padding; diffusers'
// WanCausalConv3d passes (pW, pW, pH, pH, 2 pT - cached frames, 0).
at::Tensor padded_conv3d(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                         c10::IntArrayRef pad, c10::IntArrayRef stride) {
  const char* op = "padded_conv3d";
  return run_op([&] {
    const fourfold::Tensor padded = fourfold::constant_pad_nd(to_fourfold(x, op, "x"), int_list(pad), 0.0);
    return to_torch(fourfold::conv3d(padded, weight_to_fourfold(weight, op, "weight"), to_fourfold(bias, op, "bias"),
                                     int_list(stride), {0, 0, 0}, {1, 1, 1}, 1));
  });
}

at::Tensor upsample_nearest(const at::Tensor& x, c10::IntArrayRef output_size) {
  return run_op([&] {
    return to_torch(fourfold::upsample_nearest(to_fourfold(x, "upsample_nearest", "x"), int_list(output_size)));
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(fourfold, m) {
  m.def("constant_pad_nd(Tensor x, int[] pad, float value=0) -> Tensor");
  m.def("conv2d(Tensor x, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] dilation=1, "
        "int groups=1) -> Tensor");
  m.def("conv3d(Tensor x, Tensor weight, Tensor? bias=None, int[3] stride=1, int[3] padding=0, int[3] dilation=1, "
        "int groups=1) -> Tensor");
  m.def("padded_conv3d(Tensor x, Tensor weight, Tensor? bias, int[] pad, int[3] stride=1) -> Tensor");
  m.def("upsample_nearest(Tensor x, int[] output_size) -> Tensor");
}

TORCH_LIBRARY_IMPL(fourfold, CPU, m) {
  m.impl("constant_pad_nd", &constant_pad_nd);
  m.impl("conv2d", &conv<&fourfold::conv2d>);
  m.impl("conv3d", &conv<&fourfold::conv3d>);
  m.impl("padded_conv3d", &padded_conv3d);
  m.impl("upsample_nearest", &upsample_nearest);
}

}  // namespace fourfold_torch
