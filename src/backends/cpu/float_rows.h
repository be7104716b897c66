// One strided row of f32, bf16 or f16 elements to contiguous f32 and back, for the drivers that hand kernels
// f32 rows (decode linear's activations, attention's q and out rows). The dtype is switched on once per row so
// that the bf16 loops (shifts) vectorize: per element, a switch and a trip through double (load_as_double,
// store_from_double's minifloat rounding) cost more than the kernels they fed.
#pragma once

#include <cstdint>

#include "fourfold/dtype.h"

namespace fourfold::cpu {

// dst[j] = src element j (exact), elements `step` elements apart.
inline void widen_row(DType t, const void* src, int64_t step, int64_t n, float* dst) {
  switch (t) {
    case DType::f32: {
      const float* s = static_cast<const float*>(src);
      for (int64_t j = 0; j < n; ++j) dst[j] = s[j * step];
      return;
    }
    case DType::bf16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t j = 0; j < n; ++j) dst[j] = bf16_to_f32(s[j * step]);
      return;
    }
    default: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t j = 0; j < n; ++j) dst[j] = f16_to_f32(s[j * step]);
      return;
    }
  }
}

// dst element j = src[j] * factor, rounded once to t (nearest even), elements `step` elements apart.
inline void narrow_row(DType t, const float* src, float factor, int64_t n, void* dst, int64_t step) {
  switch (t) {
    case DType::f32: {
      float* d = static_cast<float*>(dst);
      for (int64_t j = 0; j < n; ++j) d[j * step] = src[j] * factor;
      return;
    }
    case DType::bf16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (int64_t j = 0; j < n; ++j) d[j * step] = f32_to_bf16(src[j] * factor);
      return;
    }
    default: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (int64_t j = 0; j < n; ++j) d[j * step] = f32_to_f16(src[j] * factor);
      return;
    }
  }
}

}  // namespace fourfold::cpu
