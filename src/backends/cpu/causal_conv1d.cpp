// Dedicated causal_conv1d: channel-last x and out (the engine's [T, C] rows), channels in blocks over the threads,
// each block through kernels/causal_conv1d.cpp. A state of other strides (transformers' conv state [B, C, K], read
// through its view [..., 1:]) goes through a channel-last copy of its few KiB, and back. The weight is read as f32
// [K, C]: in place when it is one (a [C, K] view of it, as the engine keeps it), else converted once per call.
#include <algorithm>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernel_types.h"
#include "backends/cpu/kernels/causal_conv1d.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

bool float_type(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }
bool channel_last(const Tensor& t) { return t.size(1) <= 1 || t.stride(1) == 1; }

bool causal_conv1d_covers(const CausalConv1dArgs& a) {
  const DType t = a.x.dtype();
  return float_type(t) && float_type(a.weight.dtype()) && a.weight.size(1) <= kConvMaxTaps && channel_last(a.x) &&
         channel_last(a.out);
}

// [C, K] weight (or [C] bias) as f32 [K, C] (or [C]): its memory when it already is that, else `buffer`.
const float* tap_major(const Tensor& w, Tensor& buffer) {
  const bool vector = w.dim() == 1;
  if (w.dtype() == DType::f32 && (vector ? w.stride(0) == 1 || w.size(0) <= 1 : w.stride(0) == 1 && w.stride(1) == w.size(0)))
    return w.data_as<float>();
  const Tensor taps = vector ? w : w.transpose(0, 1);
  buffer = Tensor::empty(taps.shape(), DType::f32);
  buffer.copy_from(taps);
  return buffer.data_as<float>();
}

void causal_conv1d_channel_last(const CausalConv1dArgs& a, CausalConvFn fn) {
  const int64_t batch = a.x.size(0), channels = a.x.size(1), tokens = a.x.size(2), taps = a.weight.size(1);
  if (batch == 0 || channels == 0) return;
  Tensor weight_buffer, bias_buffer;
  const float* weight = tap_major(a.weight, weight_buffer);
  const float* bias = a.bias == nullptr ? nullptr : tap_major(*a.bias, bias_buffer);
  const RowType type = row_type(a.x.dtype(), "causal_conv1d", "x");
  const int64_t es = static_cast<int64_t>(dtype_size(a.x.dtype()));
  // Channels per work item: a multiple of every lane count; small calls (a decode step) stay on one thread.
  const int64_t block = 256, blocks = (channels + block - 1) / block;
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, block * std::max<int64_t>(tokens, 1) * taps));
  for (int64_t b = 0; b < batch; ++b) {
    const auto at = [&](const Tensor* t) -> uint8_t* {
      return t == nullptr ? nullptr : static_cast<uint8_t*>(t->data()) + b * t->stride(0) * es;
    };
    const CausalConvPlan plan{at(&a.x),  a.x.stride(2), at(&a.out), a.out.stride(2), at(a.state),
                              a.state == nullptr ? 0 : a.state->stride(2), weight, bias, type, channels, tokens, taps,
                              a.silu};
    parallel_for(0, blocks, grain, [&](int64_t begin, int64_t end) {
      fn(plan, begin * block, std::min(channels, end * block));
    });
  }
}

void causal_conv1d(const CausalConv1dArgs& a, CausalConvFn fn) {
  if (a.state == nullptr || channel_last(*a.state)) return causal_conv1d_channel_last(a, fn);
  const Shape& shape = a.state->shape();
  Tensor state = Tensor::empty({shape[0], shape[2], shape[1]}, a.state->dtype()).transpose(1, 2);
  state.copy_from(*a.state);
  causal_conv1d_channel_last({a.x, a.weight, a.bias, &state, a.silu, a.out}, fn);
  a.state->copy_from(state);
}

}  // namespace

#define ENTRIES(isa)                                                                                           \
  t.causal_conv1d = {[](const CausalConv1dArgs& a) { causal_conv1d(a, &isa::causal_conv1d_channels); },    \
                     &causal_conv1d_covers};
FOURFOLD_CPU_KERNELS(causal_conv1d, ENTRIES)

}  // namespace fourfold::cpu
