// FP4 block-scaled weights read element by element (the reference) and row by row (the generic tier, prefill).
#include "core/fp4_blocks.h"

namespace fourfold {

float fp4_scale_value(DType scale_dtype, uint8_t code) {
  return scale_dtype == DType::f8_e8m0fnu ? fp8_e8m0fnu_to_f32(code) : fp8_e4m3fn_to_f32(code);
}

float fp4_global_value(const Tensor* global) {
  return global == nullptr ? 1.0f : *static_cast<const float*>(global->data());
}

namespace {

uint8_t byte_at(const Tensor& t, int64_t r, int64_t c) {
  return static_cast<const uint8_t*>(t.data())[r * t.stride(0) + c * t.stride(1)];
}

}  // namespace

double fp4_weight_at(const Tensor& weight, const Tensor& scale, const Tensor* global, int64_t n, int64_t k) {
  const int64_t block = fp4_block_size(scale.dtype());
  const double code = fp4_e2m1_to_f32(static_cast<uint8_t>(byte_at(weight, n, k / 2) >> (4 * (k % 2))));
  return code * fp4_scale_value(scale.dtype(), byte_at(scale, n, k / block)) * fp4_global_value(global);
}

void fp4_rows_f32(const Tensor& weight, const Tensor& scale, const Tensor* global, int64_t n0, int64_t count, float* out) {
  const int64_t k_size = 2 * weight.size(1), block = fp4_block_size(scale.dtype());
  const float g = fp4_global_value(global);
  for (int64_t r = 0; r < count; ++r) {
    float* o = out + r * k_size;
    for (int64_t kb = 0; kb * block < k_size; ++kb) {
      const float s = fp4_scale_value(scale.dtype(), byte_at(scale, n0 + r, kb));
      for (int64_t k = kb * block; k < (kb + 1) * block && k < k_size; ++k) {
        const auto code = static_cast<uint8_t>(byte_at(weight, n0 + r, k / 2) >> (4 * (k % 2)));
        o[k] = fp4_e2m1_to_f32(code) * s * g;   // the first product is exact; the second rounds once
      }
    }
  }
}

}  // namespace fourfold
