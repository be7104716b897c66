// Generic scaled_mm: both FP8 operands dequantized into f32 tensors in memory (a [M, K] with scale_a, b^T
// [N, K] with scale_b^T), the primitives' GEMM into an f32 temporary, a bias pass, one conversion to out.
#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

bool scaled_mm_covers(const ScaledMmArgs& a) { return computes(a.out.dtype()) && (a.bias == nullptr || computes(a.bias->dtype())); }

void scaled_mm(const ScaledMmArgs& a) {
  const int64_t m = a.a.size(0), k = a.a.size(1), n = a.b.size(1);
  if (m == 0 || n == 0) return;
  const Tensor x = dequantize_f32(a.a, a.scale_a, a.recipe_a);
  // b [K, N] with scale_b in b's orientation: transposed, both are a weight [N, K] and its [N-grid, K-grid] scale
  // (b's rowwise [1, N] becomes [N, 1]; its 128x1 blocks [kb, N] become 1x128 blocks [N, kb]).
  const Tensor w = dequantize_f32(a.b.transpose(0, 1), a.scale_b.transpose(0, 1), a.recipe_b);
  Tensor product = empty_f32({m, n});
  gemm_nt(x.data_as<float>(), w.data_as<float>(), product.data_as<float>(), m, n, k);
  finish_product(product, a.bias, a.out);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(scaled_mm) {
  t.scaled_mm = entry(&scaled_mm, &scaled_mm_covers);
}

}  // namespace fourfold::generic
