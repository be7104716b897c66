// Dedicated scaled_mm for decode (M <= 8) with b = W^T (K contiguous): a is dequantized with its scale into a
// small f32 buffer (M x K, the activations), b is streamed once through the GEMV with its scale applied per
// (n, k-block) to the f32 accumulators: never a dequantized copy of the weight.
#include "backends/cpu/cpu_ops.h"

namespace fourfold::cpu {
namespace {

constexpr int64_t kBlock = 128;

float fp8_value(DType t, uint8_t bits) { return t == DType::f8_e4m3fn ? fp8_e4m3fn_to_f32(bits) : fp8_e5m2_to_f32(bits); }

// a[m, k] * scale_a(m, k) in f32, [M, K] contiguous.
Tensor activations(const ScaledMmArgs& s) {
  const int64_t m_size = s.a.size(0), k_size = s.a.size(1);
  Tensor out = Tensor::empty({m_size, k_size}, DType::f32);
  float* o = out.data_as<float>();
  const uint8_t* a = static_cast<const uint8_t*>(s.a.data());
  const float* sc = s.scale_a.data_as<const float>();
  const int64_t s0 = s.scale_a.stride(0), s1 = s.scale_a.stride(1);
  for (int64_t m = 0; m < m_size; ++m)
    for (int64_t k = 0; k < k_size; ++k) {
      float scale = sc[0];
      switch (s.recipe_a) {
        case ScaleRecipe::tensorwise: break;
        case ScaleRecipe::rowwise: scale = sc[m * s0]; break;
        case ScaleRecipe::block_1x128: scale = sc[m * s0 + (k / kBlock) * s1]; break;
        case ScaleRecipe::block_128x128: scale = sc[(m / kBlock) * s0 + (k / kBlock) * s1]; break;
      }
      o[m * k_size + k] = fp8_value(s.a.dtype(), a[m * s.a.stride(0) + k * s.a.stride(1)]) * scale;
    }
  return out;
}

}  // namespace

bool scaled_mm_decode_covers(const ScaledMmArgs& s) {
  const DType out = s.out.dtype();
  return s.a.size(0) <= kGemvMaxM && (s.b.size(0) <= 1 || s.b.stride(0) == 1) &&
         (out == DType::f32 || out == DType::bf16 || out == DType::f16) && s.scale_a.dtype() == DType::f32 &&
         s.scale_b.dtype() == DType::f32 &&
         (s.bias == nullptr || s.bias->dtype() == DType::f32 || s.bias->dtype() == DType::bf16);
}

void scaled_mm_decode(const ScaledMmArgs& s, const GemvPieces& gemv) {
  const int64_t m = s.a.size(0), k = s.a.size(1), n = s.b.size(1);
  if (m == 0 || n == 0) return;
  const Tensor x = activations(s);
  GemvPlan p{};
  p.m = m;
  p.n = n;
  p.k = k;
  p.x = x.data_as<const float>();
  p.w = static_cast<const uint8_t*>(s.b.data());   // W = b^T: row n at n * b.stride(1), k contiguous
  p.w_row_bytes = s.b.stride(1);
  p.w_type = row_type(s.b.dtype(), "scaled_mm", "b");
  // scale_b is in b's [K, N] orientation: dim 0 walks k-blocks, dim 1 walks n (or n-blocks).
  p.scale = s.scale_b.data_as<const float>();
  p.scale_n_stride = s.scale_b.stride(1);
  p.scale_k_stride = s.scale_b.stride(0);
  switch (s.recipe_b) {
    case ScaleRecipe::tensorwise: p.scale_n_group = p.scale_k_group = kGemvWholeGroup; break;
    case ScaleRecipe::rowwise: p.scale_n_group = 1, p.scale_k_group = kGemvWholeGroup; break;
    case ScaleRecipe::block_1x128: p.scale_n_group = 1, p.scale_k_group = kBlock; break;
    case ScaleRecipe::block_128x128: p.scale_n_group = kBlock, p.scale_k_group = kBlock; break;
  }
  plan_epilogue(p, s.bias, s.out);
  run_gemv(p, gemv);
}

}  // namespace fourfold::cpu
