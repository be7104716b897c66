// FP4 block-scaled weights read element by element (the reference) and row by row (the generic tier, prefill).
#include "core/fp4_blocks.h"

namespace fourfold {

float fp4_scale_value(DType scale_dtype, uint8_t code) {
  return scale_dtype == DType::f8_e8m0fnu ? fp8_e8m0fnu_to_f32(code) : fp8_e4m3fn_to_f32(code);
}

float fp4_global_value(const Tensor* global, int64_t index) {
  if (global == nullptr) return 1.0f;
  const int64_t stride = global->dim() == 0 ? 0 : global->stride(0);
  return static_cast<const float*>(global->data())[index * stride];
}

namespace {

// Row n of expert e of a 2-D or 3-D byte tensor (e ignored for 2-D).
const uint8_t* row_of(const Tensor& t, int64_t e, int64_t n) {
  const int64_t lead = t.dim() == 3 ? e * t.stride(0) : 0;
  return static_cast<const uint8_t*>(t.data()) + lead + n * t.stride(-2);
}

}  // namespace

double fp4_weight_at(const Tensor& weight, const Tensor& scale, float global, int64_t e, int64_t n, int64_t k) {
  const int64_t block = fp4_block_size(scale.dtype());
  const double code = fp4_e2m1_to_f32(fp4_code(row_of(weight, e, n), weight.stride(-1), k));
  return code * fp4_scale_value(scale.dtype(), row_of(scale, e, n)[(k / block) * scale.stride(-1)]) * global;
}

void fp4_rows_f32(const Tensor& weight, const Tensor& scale, float global, int64_t n0, int64_t count, float* out) {
  const int64_t k_size = 2 * weight.size(1), block = fp4_block_size(scale.dtype());
  for (int64_t r = 0; r < count; ++r) {
    float* o = out + r * k_size;
    const uint8_t* codes = row_of(weight, 0, n0 + r);
    const uint8_t* scales = row_of(scale, 0, n0 + r);
    for (int64_t kb = 0; kb * block < k_size; ++kb) {
      const float s = fp4_scale_value(scale.dtype(), scales[kb * scale.stride(1)]);
      for (int64_t k = kb * block; k < (kb + 1) * block && k < k_size; ++k)
        o[k] = fp4_e2m1_to_f32(fp4_code(codes, weight.stride(1), k)) * s * global;   // the first product is exact; the second rounds once
    }
  }
}

}  // namespace fourfold
