// Dedicated rms_norm_gated: rows in parallel, each through kernels/rms_norm_gated.cpp.
#include <algorithm>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernel_types.h"
#include "backends/cpu/kernels/rms_norm_gated.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

bool float_type(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }
bool unit_inner(const Tensor& t) { return t.size(1) <= 1 || t.stride(1) == 1; }

bool rms_norm_gated_covers(const RmsNormGatedArgs& a) {
  const DType t = a.x.dtype();
  const bool weight_ok = a.weight == nullptr || ((a.weight->dtype() == t || a.weight->dtype() == DType::f32) &&
                                                 (a.weight->size(0) <= 1 || a.weight->stride(0) == 1));
  return float_type(t) && unit_inner(a.x) && unit_inner(a.gate) && unit_inner(a.out) && weight_ok;
}

void rms_norm_gated(const RmsNormGatedArgs& a, RmsNormGatedFn row) {
  const int64_t rows = a.x.size(0), d = a.x.size(1);
  if (rows == 0 || d == 0) return;
  const RowType type = row_type(a.x.dtype(), "rms_norm_gated", "x");
  const int64_t es = static_cast<int64_t>(dtype_size(a.x.dtype()));
  const auto at = [es](const Tensor& t, int64_t r) { return static_cast<uint8_t*>(t.data()) + r * t.stride(0) * es; };
  const bool weight_f32 = a.weight != nullptr && a.weight->dtype() == DType::f32 && type != RowType::f32;
  parallel_for(0, rows, std::max<int64_t>(1, 16384 / d), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      row({at(a.x, r), at(a.gate, r), a.weight == nullptr ? nullptr : a.weight->data(), at(a.out, r), weight_f32}, type,
          d, a.eps);
  });
}

}  // namespace

#define ENTRIES(isa)                                                                                           \
  t.rms_norm_gated = {[](const RmsNormGatedArgs& a) { rms_norm_gated(a, &isa::rms_norm_gated_row); },       \
                      &rms_norm_gated_covers};
FOURFOLD_CPU_KERNELS(rms_norm_gated, ENTRIES)

}  // namespace fourfold::cpu
