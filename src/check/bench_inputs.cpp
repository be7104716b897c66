#include "check/bench_inputs.h"

#include "core/counter_rng.h"
#include "fourfold/parallel.h"

namespace fourfold {

// Uniform values in [-scale, scale), from (seed, element index), written in parallel: a 2 GB weight must not
// take a minute to make. Benchmark inputs only need to be seeded, finite and free of denormals.
Tensor bench_tensor(const Shape& shape, DType dtype, uint64_t seed, double scale) {
  Tensor t = Tensor::empty(shape, dtype);
  const size_t es = dtype_size(dtype);
  char* base = static_cast<char*>(t.data());
  parallel_for(0, t.numel(), int64_t{1} << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const double u = counter_uniform(seed, static_cast<uint64_t>(i));
      const float v = static_cast<float>((2.0 * u - 1.0) * scale);
      switch (dtype) {
        case DType::f32: reinterpret_cast<float*>(base)[i] = v; break;
        case DType::bf16: reinterpret_cast<uint16_t*>(base)[i] = f32_to_bf16(v); break;
        case DType::f16: reinterpret_cast<uint16_t*>(base)[i] = f32_to_f16(v); break;
        default: store_from_double(dtype, base + static_cast<size_t>(i) * es, v); break;
      }
    }
  });
  return t;
}

}  // namespace fourfold
