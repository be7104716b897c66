// Dedicated linear: the decode GEMV up to kLinearDecodeMaxRows rows (and every scaled_linear it covers,
// linear_decode.cpp), else the packed prefill GEMM (linear_prefill.cpp).
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/cpu_registration.h"

namespace fourfold::cpu {
namespace {

void linear(const LinearArgs& a, const GemvPieces& gemv, const GemmPieces& gemm) {
  if (linear_decode_covers(a)) linear_decode(a, gemv);
  else linear_prefill(a, gemm);
}

bool linear_covers(const LinearArgs& a) { return linear_decode_covers(a) || linear_prefill_covers(a); }

}  // namespace

#define ENTRIES(isa)                                                                 \
  static constexpr GemvPieces gemv = FOURFOLD_GEMV_PIECES(isa);                      \
  static constexpr GemmPieces gemm = FOURFOLD_GEMM_PIECES(isa);                      \
  t.linear = {[](const LinearArgs& a) { linear(a, gemv, gemm); }, &linear_covers};
FOURFOLD_CPU_KERNELS(linear, ENTRIES)

}  // namespace fourfold::cpu
