// scaled_mm from the fp8 suite (check/suites.h, Fp8LinearCase): a [m, k] fp8 @ b = W^T with W [n, k] fp8, scales
// per recipe, out_dtype output.
#include "check/op_cases/op_case.h"
#include "fourfold/ops.h"

namespace fourfold {
namespace {

// Scale tensors of a scaled_mm recipe, in a's and b's orientation (see ops.h).
Shape scale_a_shape(const Fp8LinearCase& f) {
  switch (f.recipe) {
    case Fp8Recipe::tensorwise: return {1};
    case Fp8Recipe::rowwise: return {f.m, 1};
    case Fp8Recipe::block_128x128: return {f.m, (f.k + 127) / 128};
    case Fp8Recipe::nvfp4: case Fp8Recipe::mxfp4: break;   // the fp8 suite has no FP4 recipes
  }
  return {1};
}
Shape scale_b_shape(const Fp8LinearCase& f) {
  switch (f.recipe) {
    case Fp8Recipe::tensorwise: return {1};
    case Fp8Recipe::rowwise: return {1, f.n};
    case Fp8Recipe::block_128x128: return {(f.k + 127) / 128, (f.n + 127) / 128};
    case Fp8Recipe::nvfp4: case Fp8Recipe::mxfp4: break;
  }
  return {1};
}

}  // namespace

FOURFOLD_OP_CASES(scaled_mm) {
  return {
      .op = "scaled_mm",
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        // FP8 operands stay FP8 for the oracle: only the output widens.
        const Fp8LinearCase& f = case_params<Fp8LinearCase>(c);
        Tensor a = bench_tensor({f.m, f.k}, in.dtype(), in.seed(), 64.0);
        Tensor w = bench_tensor({f.n, f.k}, in.dtype(), in.seed() + 1, 64.0);
        Tensor b = w.transpose(0, 1);
        Tensor sa = Tensor::empty(scale_a_shape(f), DType::f32);
        sa.fill_uniform(in.seed() + 2, 0.5 / 64, 1.5 / 64);
        Tensor sb;
        if (f.recipe == Fp8Recipe::block_128x128) {
          // A checkpoint's weight_scale_inv [N/128, K/128], passed transposed as ops.h says.
          const Shape s = scale_b_shape(f);
          Tensor inv = Tensor::empty({s[1], s[0]}, DType::f32);
          inv.fill_uniform(in.seed() + 3, 0.5 / 64, 1.5 / 64);
          sb = inv.transpose(0, 1);
        } else {
          sb = Tensor::empty(scale_b_shape(f), DType::f32);
          sb.fill_uniform(in.seed() + 3, 0.5 / 64, 1.5 / 64);
        }
        const DType out = in.oracle() ? DType::f64 : f.out_dtype;
        return [a, b, sa, sb, out] { return scaled_mm(a, b, sa, sb, std::nullopt, out); };
      },
      .cost = [](const BenchCase& c) {
        // read M*K + N*K bytes + 4 * (scale elements), write M*N * out size, flops 2*M*N*K
        const Fp8LinearCase& f = case_params<Fp8LinearCase>(c);
        const double m = f.m, n = f.n, k = f.k, s = element_size(c);
        const double scales = numel(scale_a_shape(f)) + numel(scale_b_shape(f));
        return OpCost{(m * k + n * k) * s + 4.0 * scales, m * n * static_cast<double>(dtype_size(f.out_dtype)),
                      2.0 * m * n * k};
      },
      .sweep = {{"e4m3fn a[9,200] rowwise x b[200,140] 128x128 blocks, out = run dtype", [](SweepInputs& in) {
                   Tensor a = in.fp8({9, 200}), b = in.fp8({200, 140});
                   Tensor sa = Tensor::full({9, 1}, 0.0625, DType::f32);
                   Tensor sb = Tensor::full({2, 2}, 0.03125, DType::f32);
                   return scaled_mm(a, b, sa, sb, std::nullopt, in.compute());
                 }}},
  };
}

}  // namespace fourfold
