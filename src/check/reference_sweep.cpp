#include "check/reference_sweep.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "fourfold/errors.h"
#include "fourfold/moe.h"
#include "fourfold/ops.h"
#include "fourfold/policy.h"

namespace fourfold {
namespace {

// Hands a case its inputs: seeded normal values rounded to the run's dtype, then (for the float64 run)
// widened, so that both runs see identical values.
class Inputs {
 public:
  Inputs(DType rounding, DType compute, uint64_t seed) : rounding_(rounding), compute_(compute), seed_(seed) {}
  Tensor randn(const Shape& shape, double stddev = 1.0) {
    Tensor t = Tensor::empty(shape, DType::f64);
    t.fill_normal(seed_ + counter_++, 0.0, stddev);
    return t.to(rounding_).to(compute_);
  }
  Tensor positive(const Shape& shape) {
    Tensor t = Tensor::empty(shape, DType::f64);
    t.fill_uniform(seed_ + counter_++, 0.5, 1.5);
    return t.to(rounding_).to(compute_);
  }
  Tensor from_values(const std::vector<double>& values, const Shape& shape) {
    return Tensor::from_vector(values, shape, DType::f64).to(rounding_).to(compute_);
  }
  // FP8 inputs are the same in every run: the run's dtype is only the output dtype.
  Tensor fp8(const Shape& shape) {
    Tensor t = Tensor::empty(shape, DType::f64);
    t.fill_normal(seed_ + counter_++, 0.0, 64.0);
    return t.to(DType::f8_e4m3fn);
  }
  Tensor indices(const Shape& shape, int64_t bound) {
    Tensor t = Tensor::empty(shape, DType::f64);
    t.fill_uniform(seed_ + counter_++, 0.0, static_cast<double>(bound) - 1e-9);
    return t.to(DType::i64);
  }
  DType compute() const { return compute_; }

 private:
  DType rounding_, compute_;
  uint64_t seed_;
  uint64_t counter_ = 0;
};

struct SweepCase {
  const char* op;
  const char* shapes;
  std::function<Tensor(Inputs&)> run;
};

Tensor first(const std::pair<Tensor, Tensor>& p) { return p.first; }

std::vector<SweepCase> sweep_cases() {
  return {
      {"linear", "x[5,64] w[48,64] b[48]", [](Inputs& in) {
         return linear(in.randn({5, 64}), in.randn({48, 64}, 0.125), in.randn({48}));
       }},
      {"matmul", "a[2,7,33] b[33,9] (batch broadcast)", [](Inputs& in) {
         return matmul(in.randn({2, 7, 33}), in.randn({33, 9}));
       }},
      {"grouped_mm", "a[24,32] b[4,32,16] offs[0,5,5,24]", [](Inputs& in) {
         Tensor offs = Tensor::from_vector({0, 5, 5, 24}, {4}, DType::i32);
         return grouped_mm(in.randn({24, 32}), in.randn({4, 32, 16}, 0.2), offs, in.compute());
       }},
      {"moe_experts", "x[3,16] gate/up[4,8,16] down[4,16,8] rows per expert 2,0,3,1", [](Inputs& in) {
         // x is f32 or bf16: an f16 run keeps its f16 values in an f32 x over f16 weights (weight-only storage).
         Tensor x = in.randn({3, 16});
         if (x.dtype() == DType::f16) x = x.to(DType::f32);
         MoeExpertWeights w;
         w.gate = in.randn({4, 8, 16}, 0.25);
         w.up = in.randn({4, 8, 16}, 0.25);
         w.down = in.randn({4, 16, 8}, 0.35);
         Tensor rows = Tensor::from_vector({0, 1, 0, 1, 2, 2}, {6}, DType::i32);
         Tensor weights = Tensor::from_vector({0.5, 0.25, 0.5, 0.75, 0.25, 0.5}, {6}, DType::f32);
         Tensor offs = Tensor::from_vector({2, 2, 5, 6}, {4}, DType::i32);
         return moe_experts(x, w, rows, weights, offs);
       }},
      {"scaled_mm", "e4m3fn a[9,200] rowwise x b[200,140] 128x128 blocks, out = run dtype", [](Inputs& in) {
         Tensor a = in.fp8({9, 200}), b = in.fp8({200, 140});
         Tensor sa = Tensor::full({9, 1}, 0.0625, DType::f32);
         Tensor sb = Tensor::full({2, 2}, 0.03125, DType::f32);
         return scaled_mm(a, b, sa, sb, std::nullopt, in.compute());
       }},
      {"softmax", "x[4,1000] dim -1", [](Inputs& in) { return softmax(in.randn({4, 1000}, 3.0), -1); }},
      {"log_softmax", "x[4,1000] dim -1", [](Inputs& in) { return log_softmax(in.randn({4, 1000}, 3.0), -1); }},
      {"constant_pad_nd", "x[1,3,4,8,8] pads (1,1,1,1,2,0)", [](Inputs& in) {
         return constant_pad_nd(in.randn({1, 3, 4, 8, 8}), {1, 1, 1, 1, 2, 0}, 0.5);
       }},
      {"scaled_dot_product_attention", "q[1,8,5,64] kv[1,2,37,64] gqa lower-right causal", [](Inputs& in) {
         AttentionOptions o;
         o.causal = CausalMode::lower_right;
         o.enable_gqa = true;
         return scaled_dot_product_attention(in.randn({1, 8, 5, 64}), in.randn({1, 2, 37, 64}),
                                             in.randn({1, 2, 37, 64}), o);
       }},
      {"rms_norm", "x[6,128] w[128]", [](Inputs& in) {
         return rms_norm(in.randn({6, 128}), {128}, in.positive({128}), 1e-6);
       }},
      {"layer_norm", "x[6,128] w b", [](Inputs& in) {
         return layer_norm(in.randn({6, 128}), {128}, in.positive({128}), in.randn({128}));
       }},
      {"group_norm", "x[2,8,5,5] groups 4", [](Inputs& in) {
         return group_norm(in.randn({2, 8, 5, 5}), 4, in.positive({8}), in.randn({8}));
       }},
      {"rotary_embedding", "x[1,4,6,64] cos/sin[6,32] half-split", [](Inputs& in) {
         std::vector<double> cv, sv;
         for (double a : in.randn({6, 32}).to_vector()) {
           cv.push_back(std::cos(a));
           sv.push_back(std::sin(a));
         }
         return rotary_embedding(in.randn({1, 4, 6, 64}), in.from_values(cv, {6, 32}), in.from_values(sv, {6, 32}));
       }},
      {"silu", "x[3,257]", [](Inputs& in) { return silu(in.randn({3, 257}, 4.0)); }},
      {"silu_mul", "gate/up[3,257]", [](Inputs& in) { return silu_mul(in.randn({3, 257}, 4.0), in.randn({3, 257})); }},
      {"gelu", "x[3,257] tanh", [](Inputs& in) { return gelu(in.randn({3, 257}, 4.0), GeluApproximate::tanh); }},
      {"add", "a[3,1,5] + 0.5 * b[4,5]", [](Inputs& in) { return add(in.randn({3, 1, 5}), in.randn({4, 5}), 0.5); }},
      {"mul", "a[3,1,5] * b[4,5]", [](Inputs& in) { return mul(in.randn({3, 1, 5}), in.randn({4, 5})); }},
      {"embedding", "w[50,16] idx[3,4]", [](Inputs& in) { return embedding(in.randn({50, 16}), in.indices({3, 4}, 50)); }},
      {"topk", "x[4,100] k 5 (values)", [](Inputs& in) { return first(topk(in.randn({4, 100}), 5)); }},
      {"argmax", "x[4,100] dim 1", [](Inputs& in) { return argmax(in.randn({4, 100}), 1); }},
      {"conv2d", "x[1,4,9,9] w[6,2,3,3] groups 2 stride 2 pad 1", [](Inputs& in) {
         return conv2d(in.randn({1, 4, 9, 9}), in.randn({6, 2, 3, 3}, 0.3), in.randn({6}), {2, 2}, {1, 1}, {1, 1}, 2);
       }},
      {"conv3d", "causal x[1,3,4,6,6] w[4,3,3,3,3]", [](Inputs& in) {
         return causal_conv3d(in.randn({1, 3, 4, 6, 6}), in.randn({4, 3, 3, 3, 3}, 0.2), in.randn({4}));
       }},
      {"channel_rms_norm", "x[2,6,3,5] gamma[6] + silu", [](Inputs& in) {
         return channel_rms_norm(in.randn({2, 6, 3, 5}), in.randn({6}), 1e-6, true);
       }},
      {"upsample_nearest", "x[1,2,5,5] -> [11,10]", [](Inputs& in) { return upsample_nearest(in.randn({1, 2, 5, 5}), {11, 10}); }},
      {"linear_backward", "grad_weight of x[5,32] w[24,32]", [](Inputs& in) {
         return linear_backward(in.randn({5, 24}), in.randn({5, 32}), in.randn({24, 32}), true).grad_weight;
       }},
      {"softmax_backward", "x[4,300]", [](Inputs& in) { return softmax_backward(in.randn({4, 300}), in.positive({4, 300}), 1); }},
      {"log_softmax_backward", "x[4,300]", [](Inputs& in) {
         return log_softmax_backward(in.randn({4, 300}), in.randn({4, 300}, 0.1), 1);
       }},
      {"constant_pad_nd_backward", "grad[1,3,6,10,10] pads (1,1,1,1,2,0)", [](Inputs& in) {
         return constant_pad_nd_backward(in.randn({1, 3, 6, 10, 10}), {1, 1, 1, 1, 2, 0});
       }},
      {"rms_norm_backward", "x[6,64] w[64]", [](Inputs& in) {
         return rms_norm_backward(in.randn({6, 64}), in.randn({6, 64}), {64}, in.positive({64}), 1e-6).grad_x;
       }},
      {"scaled_dot_product_attention_backward", "grad_q of q[1,4,3,16] kv[1,2,9,16] gqa", [](Inputs& in) {
         AttentionOptions o;
         o.enable_gqa = true;
         Tensor q = in.randn({1, 4, 3, 16}), k = in.randn({1, 2, 9, 16}), v = in.randn({1, 2, 9, 16});
         return scaled_dot_product_attention_backward(in.randn({1, 4, 3, 16}), q, k, v, o).grad_q;
       }},
  };
}

}  // namespace

std::vector<std::string> sweep_case_names() {
  std::vector<std::string> names;
  for (const SweepCase& c : sweep_cases()) names.push_back(c.op);
  return names;
}

std::vector<SweepRow> run_reference_sweep(const SweepOptions& options,
                                          const std::function<void(const SweepRow&)>& on_row) {
  ScopedPolicy reference_only(Policy::parse("reference"));
  std::vector<SweepRow> rows;
  bool matched = false;
  for (const SweepCase& c : sweep_cases()) {
    if (!options.only_op.empty() && options.only_op != c.op) continue;
    matched = true;
    for (DType dtype : options.dtypes) {
      SweepRow row{c.op, std::string(dtype_name(dtype)), c.shapes, {}, 0.0, ""};
      try {
        Inputs low(dtype, dtype, options.seed);
        Inputs wide(dtype, DType::f64, options.seed);
        const auto t0 = std::chrono::steady_clock::now();
        Tensor out = c.run(low);
        row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        Tensor oracle = c.run(wide);
        row.stats = compare_to_reference(out, oracle);
      } catch (const Error& e) {
        row.error = e.what();
      }
      if (on_row) on_row(row);
      rows.push_back(std::move(row));
    }
  }
  if (!matched)
    fail<ValueError>("sweep", "--op", fmt::format("one of the sweep's ops ({} cases)", sweep_cases().size()),
                     fmt::format("'{}'", options.only_op));
  return rows;
}

}  // namespace fourfold
