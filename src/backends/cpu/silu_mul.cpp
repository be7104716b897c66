// Dedicated silu_mul: contiguous operands in chunks over the threads, each chunk one pass (kernels/silu_mul.cpp).
#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernel_types.h"
#include "backends/cpu/kernels/silu_mul.h"
#include "backends/cpu/elementwise_chunks.h"

namespace fourfold::cpu {
namespace {

bool silu_mul_covers(const BinaryArgs& a) {
  const DType t = a.out.dtype();
  return (t == DType::f32 || t == DType::bf16 || t == DType::f16) && a.a.dtype() == t && a.b.dtype() == t &&
         a.a.is_contiguous() && a.b.is_contiguous() && a.out.is_contiguous();
}

void silu_mul(const BinaryArgs& a, SiluMulFn fn) {
  const int64_t n = a.out.numel();
  if (n == 0) return;
  const RowType type = row_type(a.out.dtype(), "silu_mul", "out");
  const int64_t es = static_cast<int64_t>(dtype_size(a.out.dtype()));
  const auto* g = static_cast<const uint8_t*>(a.a.data());
  const auto* u = static_cast<const uint8_t*>(a.b.data());
  auto* out = static_cast<uint8_t*>(a.out.data());
  for_each_elementwise_chunk(n, [&](int64_t start, int64_t stop) {
    fn(g + start * es, u + start * es, out + start * es, type, stop - start);
  });
}

}  // namespace

#define ENTRIES(isa)                                                                        \
  t.silu_mul = {[](const BinaryArgs& a) { silu_mul(a, &isa::silu_mul); }, &silu_mul_covers};
FOURFOLD_CPU_KERNELS(silu_mul, ENTRIES)

}  // namespace fourfold::cpu
