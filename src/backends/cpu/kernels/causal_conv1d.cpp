// causal_conv1d over a block of channels, compiled once per ISA: the K-1 past inputs of each lane stay in
// registers while the tokens stream by, each output one sum of K products (bias first, taps in order, f32) with
// silu fused, rounded once; the registers' last K-1 columns are the new state.
#include "backends/cpu/kernels/causal_conv1d.h"
#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

// `count` (<= kLanes) channels from channel c.
template <RowType T>
void lanes(const CausalConvPlan& p, int64_t c, int64_t count) {
  const int64_t es = static_cast<int64_t>(T == RowType::f32 ? 4 : 2);
  const auto row = [es](const void* base, int64_t r, int64_t stride) {
    return static_cast<const uint8_t*>(base) + r * stride * es;
  };
  const auto get = [&](const void* at) { return count == kLanes ? load<T>(at, c) : load_tail<T>(at, c, count, 0.0f); };
  const auto put = [&](void* at, vf v) {
    if (count == kLanes) store<T>(at, c, v);
    else store_tail<T>(at, c, count, v);
  };
  const auto weight = [&](int64_t j) {
    const float* tap = p.weight + j * p.channels;
    return count == kLanes ? load<RowType::f32>(tap, c) : load_tail<RowType::f32>(tap, c, count, 0.0f);
  };
  const int64_t k = p.taps;
  vf w[kConvMaxTaps], window[kConvMaxTaps];   // window[j]: the input j - (K-1) tokens back
  for (int64_t j = 0; j < k; ++j) w[j] = weight(j);
  for (int64_t j = 0; j + 1 < k; ++j) window[j] = p.state != nullptr ? get(row(p.state, j, p.state_row)) : vf{};
  const vf bias = p.bias == nullptr ? vf{}
                  : count == kLanes ? load<RowType::f32>(p.bias, c)
                                    : load_tail<RowType::f32>(p.bias, c, count, 0.0f);
  for (int64_t t = 0; t < p.tokens; ++t) {
    window[k - 1] = get(row(p.x, t, p.x_row));
    vf sum = bias;
    for (int64_t j = 0; j < k; ++j) sum += w[j] * window[j];
    put(const_cast<uint8_t*>(row(p.out, t, p.out_row)), p.silu ? vsilu(sum) : sum);
    for (int64_t j = 0; j + 1 < k; ++j) window[j] = window[j + 1];
  }
  if (p.state == nullptr) return;
  for (int64_t j = 0; j + 1 < k; ++j) put(const_cast<uint8_t*>(row(p.state, j, p.state_row)), window[j]);
}

}  // namespace

void causal_conv1d_channels(const CausalConvPlan& p, int64_t c0, int64_t c1) {
  with_type(p.type, [&]<RowType T>() {
    for (int64_t c = c0; c < c1; c += kLanes) lanes<T>(p, c, std::min<int64_t>(kLanes, c1 - c));
  });
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
