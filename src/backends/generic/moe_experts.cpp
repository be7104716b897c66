// Generic moe_experts: per expert with rows, as a graph lowering of grouped_mm + silu + mul + grouped_mm +
// index_add does: the rows gathered into an f32 temporary, each weight converted (fp8: dequantized) into an
// f32 copy (FP4: with its block and global scales), gate and up GEMMs, silu and the product as separate passes, the down GEMM, then a weighted
// scatter-add into an f32 accumulator that is converted to the output once.
#include <cstring>
#include <vector>

#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"
#include "core/fp4_blocks.h"
#include "fourfold/parallel.h"

namespace fourfold::generic {
namespace {

Tensor expert_f32(const Tensor& w, const Tensor* scale, const Tensor* global, int64_t e) {
  const Tensor we = w.select(0, e);
  if (is_fp4(w.dtype())) return dequantize_fp4_f32(we, scale->select(0, e), fp4_global_value(global, e));
  return scale == nullptr ? to_f32(we) : dequantize_f32(we, scale->select(0, e), ScaleRecipe::block_128x128);
}

Tensor gemm(const Tensor& x, const Tensor& w) {
  Tensor y = empty_f32({x.size(0), w.size(0)});
  gemm_nt(x.data_as<float>(), w.data_as<float>(), y.data_as<float>(), x.size(0), w.size(0), x.size(1));
  return y;
}

bool moe_experts_covers(const MoeExpertsArgs& a) { return computes(a.x.dtype()); }

void moe_experts(const MoeExpertsArgs& a) {
  const int64_t tokens = a.x.size(0), hidden = a.x.size(1), inter = a.gate.size(1);
  Tensor acc = empty_f32({tokens, hidden});
  fill(acc, 0.0);
  const Tensor x = to_f32(a.x);
  const Tensor row_weight = to_f32(a.row_weight);
  const std::vector<double> ends = a.offs.to_vector(), token = a.token_of_row.to_vector();
  float* accd = acc.data_as<float>();
  int64_t start = 0;
  for (int64_t e = 0; e < a.gate.size(0); ++e) {
    const int64_t end = static_cast<int64_t>(ends[static_cast<size_t>(e)]), rows = end - start;
    if (rows == 0) continue;
    Tensor xs = empty_f32({rows, hidden});
    parallel_for(0, rows, 1, [&](int64_t begin, int64_t stop) {
      for (int64_t r = begin; r < stop; ++r)
        std::memcpy(xs.data_as<float>() + r * hidden,
                    x.data_as<float>() + static_cast<int64_t>(token[static_cast<size_t>(start + r)]) * hidden,
                    static_cast<size_t>(hidden) * sizeof(float));
    });
    const Tensor g = gemm(xs, expert_f32(a.gate, a.gate_scale, a.gate_global, e));
    const Tensor u = gemm(xs, expert_f32(a.up, a.up_scale, a.up_global, e));
    const Tensor s = silu_f32(g);
    Tensor h = empty_f32({rows, inter});
    binary(Binary::mul, s.data_as<float>(), u.data_as<float>(), Broadcast::none, h.data_as<float>(), rows, inter);
    const Tensor y = gemm(h, expert_f32(a.down, a.down_scale, a.down_global, e));
    // Scatter-add over column ranges, so that two rows of one token never race.
    const float* yd = y.data_as<float>();
    const float* wd = row_weight.data_as<float>() + start;
    parallel_for(0, hidden, kGrainElements / rows + 1, [&](int64_t c0, int64_t c1) {
      for (int64_t r = 0; r < rows; ++r) {
        float* dst = accd + static_cast<int64_t>(token[static_cast<size_t>(start + r)]) * hidden;
        for (int64_t c = c0; c < c1; ++c) dst[c] += wd[r] * yd[r * hidden + c];
      }
    });
    start = end;
  }
  from_f32(acc, a.out);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(moe_experts) {
  t.moe_experts = entry(&moe_experts, &moe_experts_covers);
}

}  // namespace fourfold::generic
