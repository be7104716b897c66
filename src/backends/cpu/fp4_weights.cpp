// FP4 weights (core/fp4_blocks.h) for the dedicated kernels: the decode GEMV's activation layout and plan fields,
// and the prefill GEMM's panel packer, which dequantizes each panel as it packs it.
#include <algorithm>
#include <array>

#include "backends/cpu/cpu_ops.h"
#include "core/fp4_blocks.h"

namespace fourfold::cpu {
namespace {

// Every scale code's value, per scale dtype: the GEMV looks each block's scale up here.
const float* scale_table(DType scale_dtype) {
  static const auto tables = [] {
    std::array<std::array<float, 256>, 2> t{};
    for (int c = 0; c < 256; ++c) {
      t[0][c] = fp4_scale_value(DType::f8_e4m3fn, static_cast<uint8_t>(c));
      t[1][c] = fp4_scale_value(DType::f8_e8m0fnu, static_cast<uint8_t>(c));
    }
    return t;
  }();
  return tables[scale_dtype == DType::f8_e8m0fnu ? 1 : 0].data();
}

void pack_fp4(const void* source, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
  const Fp4PanelSource& s = *static_cast<const Fp4PanelSource*>(source);
  const Tensor& w = *s.weight;
  const Tensor& scale = *s.scale;
  const float* table = scale_table(scale.dtype());
  const float global = fp4_global_value(s.global);
  const int64_t block = fp4_block_size(scale.dtype()), nr = s.nr;
  const auto* codes = static_cast<const uint8_t*>(w.data());
  const auto* scales = static_cast<const uint8_t*>(scale.data());
  for (int64_t j0 = 0; j0 < nc; j0 += nr) {
    float* panel = dst + (j0 / nr) * kc * nr;
    for (int64_t j = 0; j < nr; ++j) {
      const int64_t n = n0 + j0 + j;
      if (j0 + j >= nc) {
        for (int64_t kk = 0; kk < kc; ++kk) panel[kk * nr + j] = 0.0f;
        continue;
      }
      const uint8_t* row = codes + n * w.stride(0);
      const uint8_t* srow = scales + n * scale.stride(0);
      for (int64_t kk = 0; kk < kc; ++kk) {
        const int64_t k = k0 + kk;
        panel[kk * nr + j] = fp4_e2m1_to_f32(fp4_code(row, w.stride(1), k)) * table[srow[(k / block) * scale.stride(1)]] * global;
      }
    }
  }
}

}  // namespace

Tensor fp4_activations(const float* x, int64_t m, int64_t k) {
  const int64_t ld = (k + kGemvFp4Group - 1) / kGemvFp4Group * kGemvFp4Group;
  Tensor out = Tensor::zeros({std::max<int64_t>(1, m * ld)}, DType::f32);
  float* o = out.data_as<float>();
  for (int64_t r = 0; r < m; ++r)
    for (int64_t i = 0; i < k; ++i) o[r * ld + gemv_fp4_slot(i)] = x[r * k + i];
  return out;
}

void plan_fp4_weight(GemvPlan& p, const Tensor& weight, const Tensor& scale, float global,
                     const Tensor& activations) {
  p.x = activations.data_as<const float>();
  p.fp4_x_ld = (p.k + kGemvFp4Group - 1) / kGemvFp4Group * kGemvFp4Group;
  p.w = static_cast<const uint8_t*>(weight.data());
  p.w_row_bytes = weight.stride(0);
  p.w_type = RowType::e2m1;
  p.fp4_scale = static_cast<const uint8_t*>(scale.data());
  p.fp4_scale_n_stride = scale.stride(0);
  p.fp4_scale_k_stride = scale.stride(1);
  p.fp4_block = static_cast<int>(fp4_block_size(scale.dtype()));
  p.fp4_scale_table = scale_table(scale.dtype());
  p.fp4_global = global;
}

PanelPacker fp4_panel_packer(const Fp4PanelSource& source) { return {&pack_fp4, nullptr, &source}; }

}  // namespace fourfold::cpu
