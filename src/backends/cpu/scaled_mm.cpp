// Dedicated scaled_mm: the decode GEMV for the few-row b = W^T calls it covers (scaled_mm_decode.cpp), else
// the packed GEMM (scaled_mm_prefill.cpp).
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/cpu_registration.h"

namespace fourfold::cpu {
namespace {

void scaled_mm(const ScaledMmArgs& a, const GemvPieces& gemv, const GemmPieces& gemm) {
  if (scaled_mm_decode_covers(a)) scaled_mm_decode(a, gemv);
  else scaled_mm_prefill(a, gemm);
}

bool scaled_mm_covers(const ScaledMmArgs& a) { return scaled_mm_decode_covers(a) || scaled_mm_prefill_covers(a); }

}  // namespace

#define ENTRIES(isa)                                                                          \
  static constexpr GemvPieces gemv = FOURFOLD_GEMV_PIECES(isa);                               \
  static constexpr GemmPieces gemm = FOURFOLD_GEMM_PIECES(isa);                               \
  t.scaled_mm = {[](const ScaledMmArgs& a) { scaled_mm(a, gemv, gemm); }, &scaled_mm_covers};
FOURFOLD_CPU_KERNELS(scaled_mm, ENTRIES)

}  // namespace fourfold::cpu
