// Dedicated decode linear (M <= 8): the activations converted once to a small f32 buffer, then the weight
// streamed once, its rows split over the threads (kernels/gemv.cpp), bias and output conversion in the epilogue.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/float_rows.h"
#include "core/fp4_blocks.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

// Weight bytes per parallel chunk below which another thread costs more (its wake-up) than it saves.
constexpr int64_t kChunkBytes = 128 * 1024;

bool is_float_row(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }


}  // namespace

// Converted once (float_rows.h): per element, a switch and an out-of-line conversion cost more than a router's
// whole GEMV, which has few outputs to spread the conversion over (docs/decode.md, conversions).
Tensor activations_f32(const Tensor& x) {
  const int64_t m = x.size(0), k = x.size(1);
  if (x.dtype() == DType::f32 && (k <= 1 || x.stride(1) == 1) && (m <= 1 || x.stride(0) == k)) return x;
  Tensor out = Tensor::empty({m, k}, DType::f32);
  const int64_t es = static_cast<int64_t>(dtype_size(x.dtype()));
  for (int64_t i = 0; i < m; ++i)
    widen_row(x.dtype(), static_cast<const uint8_t*>(x.data()) + i * x.stride(0) * es, x.stride(1), k,
              out.data_as<float>() + i * k);
  return out;
}

void plan_epilogue(GemvPlan& p, const Tensor* bias, Tensor& out) {
  p.bias = bias == nullptr ? nullptr : bias->data();
  p.bias_type = bias == nullptr ? RowType::f32 : row_type(bias->dtype(), "linear", "bias");
  p.bias_stride = bias == nullptr ? 0 : bias->stride(0);
  p.out = out.data();
  p.out_type = row_type(out.dtype(), "linear", "out");
  p.out_m_stride = out.stride(0);
  p.out_n_stride = out.stride(1);
}

// e4m3 weights are read as f32 bits worth w * 2^-120 (kernels/gemv.cpp), so the kernel wants the activations
// times 2^c: c = 112 makes each product w * x * 2^-8 as before; activations of 2^14 and more take a smaller c
// (down to 0) so that x * 2^c stays below 2^126 (no overflow in x, the products or their sums). Scaling up by a
// power of two is exact, and non-finite activations keep their value (so do their NaN / inf products).
int e4m3_activation_exponent(const float* x, int64_t count) {
  float amax = 0.0f;
  for (int64_t i = 0; i < count; ++i) {
    const float a = std::fabs(x[i]);
    if (a > amax && a <= std::numeric_limits<float>::max()) amax = a;
  }
  int e = 0;
  std::frexp(amax, &e);   // amax < 2^e
  return std::clamp(126 - e, 0, 112);
}

void run_gemv(const GemvPlan& plan, const GemvPieces& gemv) {
  if (plan.m == 0 || plan.n == 0) return;
  GemvPlan p = plan;
  Tensor scaled;   // from the allocator, so the memory record sees it
  PairActivations pairs;
  const bool fp8 = p.w_type == RowType::e4m3 || p.w_type == RowType::e5m2;
  if (fp8 && gemv.pairs_fast()) {
    pairs = pair_activations(p.x, p.k, {{0, p.m}});
    pairs.plan(p, 0);
  } else if (p.w_type == RowType::e4m3) {
    p.x_exp2 = e4m3_activation_exponent(p.x, p.m * p.k);
    const float f = std::ldexp(1.0f, p.x_exp2);
    scaled = Tensor::empty({std::max<int64_t>(1, p.m * p.k)}, DType::f32);
    float* sd = scaled.data_as<float>();
    for (int64_t i = 0; i < p.m * p.k; ++i) sd[i] = p.x[i] * f;
    p.x = sd;
  }
  const int64_t es = p.w_type == RowType::f32 ? 4 : (p.w_type == RowType::bf16 || p.w_type == RowType::f16) ? 2 : 1;
  const int64_t row_bytes = std::max<int64_t>(1, p.w_type == RowType::e2m1 ? p.k / 2 : p.k * es);
  const int64_t grain = std::max<int64_t>(4, kChunkBytes / row_bytes);
  parallel_for(0, p.n, grain, [&](int64_t begin, int64_t end) { gemv.rows(p, begin, end); });
}

bool linear_decode_covers(const LinearArgs& a) {
  const DType xt = a.x.dtype(), wt = a.weight.dtype();
  if (a.x.size(0) > kGemvMaxM || !is_float_row(xt) || a.out.dtype() != xt) return false;
  if (a.weight.size(1) > 1 && a.weight.stride(1) != 1) return false;
  if (is_fp4(wt)) return true;   // its scales are read through their strides
  if (!known_row_type(wt)) return false;
  if (is_fp8(wt)) return a.weight_scale != nullptr && a.weight_scale->dtype() == DType::f32;
  return a.weight_scale == nullptr && (wt == xt || xt == DType::f32);
}

void linear_decode(const LinearArgs& a, const GemvPieces& gemv) {
  const int64_t m = a.x.size(0), k = a.x.size(1), n = a.weight.size(0);
  if (m == 0 || n == 0) return;
  const Tensor x = activations_f32(a.x);
  GemvPlan p{};
  p.m = m;
  p.n = n;
  p.k = k;
  p.x = x.data_as<const float>();
  Tensor fp4_x;
  if (is_fp4(a.weight.dtype())) {
    fp4_x = fp4_activations(p.x, m, k);
    plan_fp4_weight(p, a.weight, *a.weight_scale, fp4_global_value(a.global_scale), fp4_x);
    plan_epilogue(p, a.bias, a.out);
    return run_gemv(p, gemv);
  }
  p.w = static_cast<const uint8_t*>(a.weight.data());
  p.w_row_bytes = a.weight.stride(0) * static_cast<int64_t>(dtype_size(a.weight.dtype()));
  p.w_type = row_type(a.weight.dtype(), "linear", "weight");
  if (a.weight_scale != nullptr) {
    const Tensor& s = *a.weight_scale;   // [1, 1], [N, 1] or [ceil(N/128), ceil(K/128)]
    p.scale = s.data_as<const float>();
    const bool block = a.weight_recipe == ScaleRecipe::block_128x128;
    p.scale_n_group = a.weight_recipe == ScaleRecipe::tensorwise ? kGemvWholeGroup : block ? 128 : 1;
    p.scale_k_group = block ? 128 : kGemvWholeGroup;
    p.scale_n_stride = s.stride(0);
    p.scale_k_stride = s.stride(1);
  }
  plan_epilogue(p, a.bias, a.out);
  run_gemv(p, gemv);
}

}  // namespace fourfold::cpu
