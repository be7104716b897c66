// linear: x [m, k] @ weight [n, k]^T (+ bias [n]) from the linear suites (read here; LinearCase in
// linear_params.h); an FP8 weight goes through scaled_linear with a weight scale of the case's recipe, an FP4 one
// (float4_e2m1fn_x2 [n, k/2]) with its NVFP4 or MXFP4 block scales.
#include <cmath>

#include "check/op_cases/op_case.h"
#include "check/suite_reader.h"
#include "fourfold/ops.h"

namespace fourfold {
namespace {

void parse_linear(const SuiteReader& r, const nlohmann::json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "m", "bias", "weight_only", "models",
                      "shapes"});
  const std::vector<int64_t> ms = r.integers(r.need(j, "", "m"), "m");
  const std::vector<bool> biases = r.booleans(r.need(j, "", "bias"), "bias");
  // Weight-only variants, each run for every shape without bias: x dtype, weight dtype, fp8 recipe, m.
  struct WeightOnly {
    DType x, weight;
    Fp8Recipe recipe;
    std::vector<int64_t> ms;
  };
  std::vector<WeightOnly> weight_only;
  if (r.has(j, "weight_only")) {
    const nlohmann::json& list = r.array(j["weight_only"], "weight_only");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = SuiteReader::at("weight_only", i);
      r.only_keys(list[i], path, {"x", "weight", "recipe", "m"});
      WeightOnly w{r.dtype(r.need(list[i], path, "x"), path + ".x"), r.dtype(r.need(list[i], path, "weight"), path + ".weight"),
                   Fp8Recipe::tensorwise, r.integers(r.need(list[i], path, "m"), path + ".m")};
      if (r.has(list[i], "recipe"))
        w.recipe = r.choice<Fp8Recipe>(list[i]["recipe"], path + ".recipe",
                                       {{"tensorwise", Fp8Recipe::tensorwise}, {"rowwise", Fp8Recipe::rowwise},
                                        {"block_128x128", Fp8Recipe::block_128x128}, {"nvfp4", Fp8Recipe::nvfp4},
                                        {"mxfp4", Fp8Recipe::mxfp4}});
      const bool fp4_recipe = w.recipe == Fp8Recipe::nvfp4 || w.recipe == Fp8Recipe::mxfp4;
      if (is_fp4(w.weight) != fp4_recipe && (is_fp4(w.weight) || is_fp8(w.weight)))
        r.bad(path + ".recipe", is_fp4(w.weight) ? "nvfp4 or mxfp4 for a float4_e2m1fn_x2 weight"
                                                  : "tensorwise, rowwise or block_128x128 for an fp8 weight",
              list[i].contains("recipe") ? list[i]["recipe"] : nlohmann::json("tensorwise"));
      weight_only.push_back(std::move(w));
    }
  }
  if (r.has(j, "models")) r.object(j["models"], "models");
  for_each_weight_shape(r, j, suite, "also", [&](const std::string& path, const nlohmann::json& s, int64_t n, int64_t k,
                                                  const std::string& name) {
    if (r.has(s, "also")) r.array(s["also"], path + ".also", false);
    for (DType dtype : dtypes)
      for (int64_t m : ms)
        for (bool bias : biases) {
          BenchCase c;
          c.name = name;
          c.shape = fmt::format("x[{},{}] w[{},{}]{}", m, k, n, k, bias ? " +bias" : "");
          c.dtype = dtype;
          c.params = LinearCase{m, n, k, bias};
          suite.cases.push_back(std::move(c));
        }
    for (const WeightOnly& w : weight_only)
      for (int64_t m : w.ms) {
        BenchCase c;
        c.name = name;
        c.shape = fmt::format("x[{},{}] w[{},{}] {}{}", m, k, n, k, dtype_name(w.weight),
                              is_fp8(w.weight) || is_fp4(w.weight) ? " " + std::string(fp8_recipe_name(w.recipe)) : std::string());
        c.dtype = w.x;
        c.params = LinearCase{m, n, k, false, w.weight, w.recipe};
        suite.cases.push_back(std::move(c));
      }
  });
}

// scaled_linear's weight scale for an fp8 weight [n, k]: [1] tensorwise, [n, 1] rowwise, [n/128, k/128] blocks;
// for an fp4 one, a byte per 16 (nvfp4) or 32 (mxfp4) values of a row.
Shape weight_scale_shape(const LinearCase& l) {
  switch (l.recipe) {
    case Fp8Recipe::tensorwise: return {1};
    case Fp8Recipe::rowwise: return {l.n, 1};
    case Fp8Recipe::block_128x128: return {(l.n + 127) / 128, (l.k + 127) / 128};
    case Fp8Recipe::nvfp4: return {l.n, l.k / 16};
    case Fp8Recipe::mxfp4: return {l.n, l.k / 32};
  }
  return {1};
}

// Random e2m1 codes [n, k/2] (every code as likely), from the case's seed.
Tensor fp4_codes(int64_t n, int64_t k, uint64_t seed) {
  Tensor w = Tensor::empty({n, k / 2}, DType::u8);
  w.fill_uniform(seed, 0.0, 256.0);   // truncated to integers 0..255
  return w.view_dtype(DType::f4_e2m1fn_x2);
}

}  // namespace

std::string_view fp8_recipe_name(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::tensorwise: return "tensorwise";
    case Fp8Recipe::rowwise: return "rowwise";
    case Fp8Recipe::block_128x128: return "block_128x128";
    case Fp8Recipe::nvfp4: return "nvfp4";
    case Fp8Recipe::mxfp4: return "mxfp4";
  }
  return "?";
}

void to_json(nlohmann::ordered_json& j, const LinearCase& c) {
  j = {{"m", c.m}, {"n", c.n}, {"k", c.k}, {"bias", c.bias},
       {"weight_dtype", c.weight_dtype ? nlohmann::ordered_json(dtype_name(*c.weight_dtype)) : nullptr},
       {"recipe", fp8_recipe_name(c.recipe)}};
}

FOURFOLD_OP_CASES(linear) {
  return {
      .op = "linear",
      .suite = {"linear", parse_linear},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const LinearCase& l = case_params<LinearCase>(c);
        Tensor x = in({l.m, l.k}, 0);
        const DType wdt = l.weight_dtype.value_or(in.dtype());
        const double w_scale = 1.0 / std::sqrt(static_cast<double>(l.k));
        OptTensor b;
        if (l.bias) b = in({l.n}, 2);
        if (is_fp4(wdt)) {
          // e2m1 values of a few units; the block scales bring a row to about 1 / sqrt(k), the global one to 1.
          const bool nv = l.recipe == Fp8Recipe::nvfp4;
          const Tensor w = fp4_codes(l.n, l.k, in.seed() + 1);
          Tensor s = Tensor::empty(weight_scale_shape(l), nv ? DType::f8_e4m3fn : DType::f8_e8m0fnu);
          s.fill_uniform(in.seed() + 3, 0.2 * w_scale, 0.6 * w_scale);
          OptTensor g;
          if (nv) g = Tensor::full({1}, 1.0, DType::f32);
          return [x, w, s, b, g] { return scaled_linear(x, w, s, b, g); };
        }
        if (is_fp8(wdt)) {
          // FP8 weights stay FP8 for the oracle too; values of a few units, the scale brings them back.
          Tensor w = bench_tensor({l.n, l.k}, wdt, in.seed() + 1, 64.0);
          Tensor s = Tensor::empty(weight_scale_shape(l), DType::f32);
          s.fill_uniform(in.seed() + 3, 0.5 / 64 * w_scale, 1.5 / 64 * w_scale);
          return [x, w, s, b] { return scaled_linear(x, w, s, b); };
        }
        Tensor w = in.wide(bench_tensor({l.n, l.k}, wdt, in.seed() + 1, w_scale));   // the oracle: same values in f64
        return [x, w, b] { return linear(x, w, b); };
      },
      .cost = [](const BenchCase& c) {
        // read (M*K + N*K [+ N]) * s (the weight in its own dtype, plus its scales), write M*N * s, flops 2*M*N*K
        const LinearCase& l = case_params<LinearCase>(c);
        const double m = l.m, n = l.n, k = l.k, s = element_size(c);
        const DType wdt = l.weight_dtype.value_or(c.dtype);
        const double ws = is_fp4(wdt) ? 0.5 : static_cast<double>(dtype_size(wdt));
        const double scales = is_fp8(wdt)   ? 4.0 * numel(weight_scale_shape(l))
                              : is_fp4(wdt) ? numel(weight_scale_shape(l)) + (l.recipe == Fp8Recipe::nvfp4 ? 4.0 : 0.0)
                                            : 0.0;
        return OpCost{(m * k + (l.bias ? n : 0.0)) * s + n * k * ws + scales, m * n * s, 2.0 * m * n * k};
      },
      .sweep = {{"x[5,64] w[48,64] b[48]", [](SweepInputs& in) {
                   return linear(in.randn({5, 64}), in.randn({48, 64}, 0.125), in.randn({48}));
                 }},
                {"x[3,67] w[29,67] (odd K and N tails, no bias)", [](SweepInputs& in) {
                   return linear(in.randn({3, 67}), in.randn({29, 67}, 0.125));
                 }},
                {"x[1,40] w[35,40] (one row: the decode GEMV, a row block's tail)", [](SweepInputs& in) {
                   return linear(in.randn({1, 40}), in.randn({35, 40}, 0.125));
                 }},
                {"x[17,48] w[20,48] (past a GEMM tile's rows)", [](SweepInputs& in) {
                   return linear(in.randn({17, 48}), in.randn({20, 48}, 0.125), in.randn({20}));
                 }},
                {"x = [64,3] transposed, w[24,64] (a strided input)", [](SweepInputs& in) {
                   return linear(in.randn({64, 3}).transpose(0, 1), in.randn({24, 64}, 0.125));
                 }}},
  };
}

}  // namespace fourfold
