// scaled_mm from the fp8 suite (read here; Fp8LinearCase in scaled_mm_params.h): a [m, k] fp8 @ b = W^T with
// W [n, k] fp8, scales per recipe, out_dtype output.
#include "check/op_cases/op_case.h"
#include "check/suite_reader.h"
#include "fourfold/ops.h"

namespace fourfold {
namespace {

void parse_fp8(const SuiteReader& r, const nlohmann::json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "out_dtype", "recipes", "m", "shapes"});
  for (size_t i = 0; i < dtypes.size(); ++i)
    if (!is_fp8(dtypes[i])) r.bad(SuiteReader::at("dtypes", i), "an FP8 dtype (float8_e4m3fn, float8_e5m2)", j["dtypes"][i]);
  const DType out = r.has(j, "out_dtype") ? r.dtype(j["out_dtype"], "out_dtype") : DType::bf16;
  if (out != DType::bf16 && out != DType::f32 && out != DType::f16) r.bad("out_dtype", "bf16, f32 or f16", j["out_dtype"]);
  const nlohmann::json& recipes_json = r.array(r.need(j, "", "recipes"), "recipes");
  std::vector<Fp8Recipe> recipes;
  for (size_t i = 0; i < recipes_json.size(); ++i)
    recipes.push_back(r.choice<Fp8Recipe>(recipes_json[i], SuiteReader::at("recipes", i),
                                          {{"tensorwise", Fp8Recipe::tensorwise}, {"rowwise", Fp8Recipe::rowwise},
                                           {"block_128x128", Fp8Recipe::block_128x128}}));
  const std::vector<int64_t> default_m = r.integers(r.need(j, "", "m"), "m");
  for_each_weight_shape(r, j, suite, "m", [&](const std::string& path, const nlohmann::json& s, int64_t n, int64_t k,
                                             const std::string& name) {
    const std::vector<int64_t> ms = r.has(s, "m") ? r.integers(s["m"], path + ".m") : default_m;
    for (DType dtype : dtypes)
      for (int64_t m : ms)
        for (Fp8Recipe recipe : recipes) {
          BenchCase c;
          c.name = name;
          c.shape = fmt::format("a[{},{}] w[{},{}] {}", m, k, n, k, fp8_recipe_name(recipe));
          c.dtype = dtype;
          c.params = Fp8LinearCase{m, n, k, recipe, out};
          suite.cases.push_back(std::move(c));
        }
  });
}

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

void to_json(nlohmann::ordered_json& j, const Fp8LinearCase& c) {
  j = {{"m", c.m}, {"n", c.n}, {"k", c.k}, {"recipe", fp8_recipe_name(c.recipe)}, {"out_dtype", dtype_name(c.out_dtype)}};
}

FOURFOLD_OP_CASES(scaled_mm) {
  return {
      .op = "scaled_mm",
      .suite = {"scaled_mm", parse_fp8},
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
