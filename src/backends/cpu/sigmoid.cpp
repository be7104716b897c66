// Dedicated sigmoid: contiguous x and out in chunks over the threads, each chunk one pass (kernels/sigmoid.cpp).
#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernel_types.h"
#include "backends/cpu/kernels/sigmoid.h"
#include "backends/cpu/elementwise_chunks.h"

namespace fourfold::cpu {
namespace {

bool sigmoid_covers(const UnaryArgs& a) {
  const DType t = a.out.dtype();
  return (t == DType::f32 || t == DType::bf16 || t == DType::f16) && a.x.dtype() == t && a.x.is_contiguous() &&
         a.out.is_contiguous();
}

void sigmoid(const UnaryArgs& a, SigmoidFn fn) {
  const int64_t n = a.out.numel();
  if (n == 0) return;
  const RowType type = row_type(a.out.dtype(), "sigmoid", "out");
  const int64_t es = static_cast<int64_t>(dtype_size(a.out.dtype()));
  const auto* x = static_cast<const uint8_t*>(a.x.data());
  auto* out = static_cast<uint8_t*>(a.out.data());
  for_each_elementwise_chunk(n, [&](int64_t start, int64_t stop) {
    fn(x + start * es, out + start * es, type, stop - start);
  });
}

}  // namespace

#define ENTRIES(isa) t.sigmoid = {[](const UnaryArgs& a) { sigmoid(a, &isa::sigmoid); }, &sigmoid_covers};
FOURFOLD_CPU_KERNELS(sigmoid, ENTRIES)

}  // namespace fourfold::cpu
