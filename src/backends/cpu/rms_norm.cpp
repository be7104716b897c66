// Dedicated rms_norm / add_rms_norm: rows in parallel, each row's passes in kernels/rms_norm.cpp.
#include <algorithm>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernel_types.h"
#include "backends/cpu/kernels/rms_norm.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

using RmsNormRowFn = void (*)(const RmsNormRow&, RowType, int64_t, double);

bool float_type(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }
bool unit_inner(const Tensor& t) { return t.size(1) <= 1 || t.stride(1) == 1; }

bool rms_norm_covers(const RmsNormArgs& a) {
  const DType t = a.x.dtype();
  const bool weight_ok = a.weight == nullptr || ((a.weight->dtype() == t || a.weight->dtype() == DType::f32) &&
                                                  (a.weight->size(0) <= 1 || a.weight->stride(0) == 1));
  const bool residual_ok =
      a.residual == nullptr || (a.residual->dtype() == t && unit_inner(*a.residual) && unit_inner(*a.sum_out));
  return float_type(t) && unit_inner(a.x) && unit_inner(a.out) && weight_ok && residual_ok;
}

void rms_norm(const RmsNormArgs& a, RmsNormRowFn row) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  if (rows == 0 || d == 0) return;
  const RowType type = row_type(a.x.dtype(), "rms_norm", "x");
  const int64_t es = static_cast<int64_t>(dtype_size(a.x.dtype()));
  auto at = [es](const Tensor* t, int64_t r) -> uint8_t* {
    return t == nullptr ? nullptr : static_cast<uint8_t*>(t->data()) + r * t->stride(0) * es;
  };
  parallel_for(0, rows, std::max<int64_t>(1, 16384 / d), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const RmsNormRow plan{at(&a.x, r),      at(a.residual, r), a.weight == nullptr ? nullptr : a.weight->data(),
                            at(&a.out, r),    at(a.sum_out, r),
                            a.weight != nullptr && a.weight->dtype() == DType::f32};
      row(plan, type, d, a.eps);
    }
  });
}

}  // namespace

#define ENTRIES(isa)                                                                             \
  t.rms_norm = {[](const RmsNormArgs& a) { rms_norm(a, &isa::rms_norm_row); }, &rms_norm_covers};
FOURFOLD_CPU_KERNELS(rms_norm, ENTRIES)

}  // namespace fourfold::cpu
