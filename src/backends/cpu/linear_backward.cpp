// Dedicated linear_backward: the three gradients as three problems of one packed-GEMM call (one parallel region):
// grad_x = g W, grad_weight = g^T x (g read through swapped strides, nothing transposed in memory), and
// grad_bias = ones[1, M] g, the column sums as a one-row GEMM (wasting the register tile's other rows, which
// costs 2 M N flops per row: small next to the 4 M N K of the other two).
#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/gemm.h"

namespace fourfold::cpu {
namespace {

bool linear_backward_covers(const LinearBackwardArgs& a) {
  const DType t = a.x.dtype();
  return t == DType::f32 || t == DType::bf16 || t == DType::f16;
}

void linear_backward(const LinearBackwardArgs& a, const GemmPieces& pieces) {
  const int64_t m = a.x.size(0), k = a.x.size(1), n = a.weight.size(0);
  const std::vector<float> ones(static_cast<size_t>(m), 1.0f);
  std::vector<GemmProblem> problems{
      {m, k, n, operand(a.grad_out), operand(a.weight), output(a.grad_x)},
      {n, k, m, operand(a.grad_out, true), operand(a.x), output(a.grad_weight)},
  };
  if (a.grad_bias != nullptr)
    problems.push_back({1, n, m, {reinterpret_cast<const uint8_t*>(ones.data()), RowType::f32, 0, 1},
                        operand(a.grad_out),
                        {static_cast<uint8_t*>(a.grad_bias->data()), row_type(a.grad_bias->dtype(), "linear_backward", "grad_bias"), 0,
                         a.grad_bias->stride(0), nullptr, RowType::f32, 0}});
  gemm(problems, pieces);
}

}  // namespace

#define ENTRIES(isa)                                            \
  static constexpr GemmPieces gemm = FOURFOLD_GEMM_PIECES(isa); \
  t.linear_backward = {[](const LinearBackwardArgs& a) { linear_backward(a, gemm); }, &linear_backward_covers};
FOURFOLD_CPU_KERNELS(linear_backward, ENTRIES)

}  // namespace fourfold::cpu
