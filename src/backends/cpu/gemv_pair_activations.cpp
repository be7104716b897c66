// The activations of an fp8 GEMV as bf16 pair terms (cpu_ops.h, pair_activations): written once per call,
// read by every weight row, so the split and the slot shuffle cost K elements, not N x K.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "backends/cpu/cpu_ops.h"
#include "fourfold/dtype.h"

namespace fourfold::cpu {
namespace {

// The largest finite activations land near 2^15: products with the largest fp8 weight (e5m2's 57344 < 2^16)
// stay below 2^31 and sums of 2^20 of them below 2^51, far from f32's overflow even after a block scale, while
// a term must fall below 2^-141 of the largest before vdpbf16ps flushes it.
constexpr int kTargetExp2 = 16;   // largest magnitude below 2^16

}  // namespace

void PairActivations::plan(GemvPlan& p, int64_t row) const {
  p.xp = buffer.data_as<const uint16_t>() + row * ld;
  p.xp_ld = ld;
  p.xp_terms = terms;
  p.xp_exp2 = exp2;
  p.xw = wide.defined() ? wide.data_as<const float>() + row * ld / kGemvMaxTerms : nullptr;
  p.xw_ld = ld / kGemvMaxTerms;
}

PairActivations pair_activations(const float* x, int64_t k, const std::vector<std::pair<int64_t, int64_t>>& rows) {
  float amax = 0.0f;
  bool all_bf16 = true;   // every element a bf16 value (then one term carries it)
  int64_t row_count = 0;
  for (auto [r0, r1] : rows) {
    row_count = std::max(row_count, r1);
    for (int64_t i = r0 * k; i < r1 * k; ++i) {
      const float a = std::fabs(x[i]);
      if (a > amax && a <= std::numeric_limits<float>::max()) amax = a;
      all_bf16 = all_bf16 && (std::bit_cast<uint32_t>(x[i]) & 0xffffu) == 0;
    }
  }
  PairActivations out;
  int e = 0;
  std::frexp(amax, &e);   // amax < 2^e (e = 0 for amax = 0: nothing to scale)
  out.exp2 = amax == 0.0f ? 0 : kTargetExp2 - e;
  // A power of two keeps a bf16 value one, but for those it lowers below f32's normal range: below 2^-141 of
  // the largest, where vdpbf16ps would flush them anyway.
  out.terms = all_bf16 ? 1 : kGemvMaxTerms;
  const int64_t lines = (k + kGemvPairLine - 1) / kGemvPairLine;
  out.ld = lines * kGemvPairLine * out.terms;
  out.buffer = Tensor::zeros({std::max<int64_t>(1, row_count * out.ld)}, DType::bf16);
  uint16_t* dst = out.buffer.data_as<uint16_t>();
  if (out.terms == kGemvMaxTerms) out.wide = Tensor::zeros({std::max<int64_t>(1, row_count * lines * kGemvPairLine)}, DType::f32);
  float* wide = out.wide.defined() ? out.wide.data_as<float>() : nullptr;
  // x * 2^exp2 in double, rounded once to f32: exact but where the result leaves f32's normal range (below
  // 2^-141 of the largest, see kTargetExp2). The factor itself may lie outside f32's range.
  const double factor = std::ldexp(1.0, out.exp2);
  for (auto [r0, r1] : rows)
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t line = 0; line * kGemvPairLine < k; ++line) {
        uint16_t* terms_of_line = dst + r * out.ld + line * kGemvPairLine * out.terms;
        const int64_t i_end = std::min(k, (line + 1) * kGemvPairLine);
        for (int64_t i = line * kGemvPairLine; i < i_end; ++i) {
          uint16_t* terms = terms_of_line + gemv_pair_slot(static_cast<int>(i % kGemvPairLine));
          float v = static_cast<float>(static_cast<double>(x[r * k + i]) * factor);
          if (wide != nullptr)
            wide[r * lines * kGemvPairLine + line * kGemvPairLine + gemv_pair_wide_slot(static_cast<int>(i % kGemvPairLine))] = v;
          if (out.terms == 1 || !std::isfinite(v)) {
            terms[0] = f32_to_bf16(v);   // a bf16 value (exact), or inf / NaN: one term, the rest stay zero
            continue;
          }
          // RNE to bf16, the exact remainder, again: three terms hold the 24 significant bits.
          for (int t = 0; t < out.terms; ++t) {
            const uint16_t b = f32_to_bf16(v);
            terms[t * kGemvPairLine] = b;
            v -= bf16_to_f32(b);
          }
        }
      }
  return out;
}

}  // namespace fourfold::cpu
