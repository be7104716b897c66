// Dedicated conv2d / conv3d: one implicit GEMM per batch element, out[n] [O, positions] = weight [O, C * taps]
// times the im2col matrix of x[n], on the packed GEMM driver (gemm.h): the weight packs as any A operand, the
// B panels are gathered from the input window by the per-ISA conv_pack_b (kernels/conv_pack.cpp), so no
// im2col copy of the input exists, and the bias is added per output channel as the tile is stored. A
// pointwise conv (1x1, stride 1, no padding) over contiguous planes is the plain GEMM with B = x[n] [C, H * W].
// All batch elements' tiles run in one parallel region.
#include <vector>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/kernels/conv_pack.h"

namespace fourfold::cpu {
namespace {

// The level's GEMM and its B packers for the implicit im2col matrix (kernels/conv_pack.h).
struct ConvPieces {
  GemmPieces gemm;
  void (*pack_b)(const void*, int64_t, int64_t, int64_t, int64_t, float*);
  void (*pack_b_pairs)(const void*, int64_t, int64_t, int64_t, int64_t, float*);
};

bool pointwise(const ConvGather& g) {
  for (int d = 0; d < kConvDims; ++d)
    if (g.kernel[d] != 1 || g.stride[d] != 1 || g.padding[d] != 0) return false;
  return g.in_stride[2] == 1 && g.in_stride[1] == g.in_size[2] && g.in_stride[0] == g.in_size[1] * g.in_size[2];
}

// x's batch element 0 seen through kConvDims spatial dims (conv2d's leading one of size 1).
ConvGather gather_plan(const ConvArgs& a) {
  ConvGather g{};
  g.x = static_cast<const uint8_t*>(a.x.data());
  g.type = row_type(a.x.dtype(), "conv", "x");
  g.c_stride = a.x.stride(1);
  const int lead = kConvDims - (a.x.dim() - 2);
  for (int d = 0; d < kConvDims; ++d) {
    const bool real = d >= lead;
    const int dim = 2 + d - lead;
    g.in_size[d] = real ? a.x.size(dim) : 1;
    g.in_stride[d] = real ? a.x.stride(dim) : 0;
    g.out_size[d] = real ? a.out.size(dim) : 1;
    g.kernel[d] = real ? a.weight.size(dim) : 1;
    g.stride[d] = real ? a.stride[d - lead] : 1;
    g.padding[d] = real ? a.padding[d - lead] : 0;
    g.dilation[d] = real ? a.dilation[d - lead] : 1;
  }
  return g;
}

// Groups 1, f32 / bf16 / f16, any stride, padding and dilation, x of any strides, a contiguous weight.
bool conv_covers(const ConvArgs& a) {
  const DType t = a.x.dtype();
  return a.groups == 1 && (t == DType::f32 || t == DType::bf16 || t == DType::f16) && a.weight.is_contiguous() &&
         a.out.is_contiguous();
}

void conv(const ConvArgs& a, const ConvPieces& pieces) {
  const int64_t batch = a.x.size(0), channels_out = a.out.size(1);
  if (a.out.numel() == 0) return;
  const int64_t positions = a.out.numel() / (batch * channels_out);
  const int64_t depth = a.weight.numel() / channels_out;
  const RowType type = row_type(a.x.dtype(), "conv", "x");
  const int64_t es = static_cast<int64_t>(dtype_size(a.x.dtype()));
  const ConvGather plan = gather_plan(a);
  const bool plain = pointwise(plan);
  std::vector<ConvGather> gathers(batch, plan);
  std::vector<PanelPacker> packers(batch);
  std::vector<GemmProblem> problems;
  GemmOut out = output(a.out, a.bias);
  out.rs = positions;   // out[n] as [O, positions]
  out.cs = 1;
  out.bias_by_row = true;
  const GemmOperand w{static_cast<const uint8_t*>(a.weight.data()), type, depth, 1};
  for (int64_t n = 0; n < batch; ++n) {
    gathers[n].x += n * a.x.stride(0) * es;
    packers[n] = {pieces.pack_b, pieces.pack_b_pairs, &gathers[n]};
    GemmOut out_n = out;
    out_n.data += n * a.out.stride(0) * es;
    const GemmOperand b{gathers[n].x, type, plain ? plan.c_stride : 0, 1};
    problems.push_back({channels_out, positions, depth, w, b, out_n, plain ? nullptr : &packers[n]});
  }
  gemm(problems, pieces.gemm);
}

}  // namespace

#define ENTRIES(isa)                                                                                         \
  static constexpr ConvPieces pieces{FOURFOLD_GEMM_PIECES(isa), &isa::conv_pack_b, &isa::conv_pack_b_pairs}; \
  t.conv2d = {[](const ConvArgs& a) { conv(a, pieces); }, &conv_covers};                                     \
  t.conv3d = {[](const ConvArgs& a) { conv(a, pieces); }, &conv_covers};
FOURFOLD_CPU_KERNELS(conv_nd, ENTRIES)

}  // namespace fourfold::cpu
