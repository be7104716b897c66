// The generic tier against the reference tier: each generic op forced, compared on random data, odd and empty
// shapes, non-contiguous inputs and NaN/inf; the dispatch counters show which tier really ran.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fourfold/parallel.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::non_contiguous;
using testing::randn;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr DType kGenericTypes[] = {DType::f32, DType::bf16, DType::f16};

// Relative tolerance of an f32 computation rounded once to `dtype`, against the float64 reference.
double rtol(DType dtype) { return dtype == DType::f32 ? 1e-5 : 1e-2; }

uint64_t calls(const std::string& op, Tier tier) {
  for (const DispatchCount& c : dispatch_counts())
    if (c.op == op) return c.calls[static_cast<int>(tier)];
  return 0;
}

// Runs fn under `policy` ("generic", "softmax=generic", "reference", ...).
Tensor under(const char* policy, const std::function<Tensor()>& fn) {
  ScopedPolicy scope(Policy::parse(policy));
  return fn();
}

// fn on the generic tier and on the reference tier; expects the generic tier to have run `op` and the results to
// agree within rtol/atol.
void expect_generic_matches(const std::string& op, const std::function<Tensor()>& fn, double rt, double at,
                            const std::string& what) {
  reset_dispatch_counts();
  const Tensor got = under("generic", fn);
  EXPECT_GT(calls(op, Tier::generic), 0u) << what;
  EXPECT_EQ(calls(op, Tier::reference), 0u) << what;
  const Tensor want = under("reference", fn);
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_TRUE(all_close(got, want, rt, at)) << what;
}

// fn forced to the generic tier runs on the reference tier instead (a case the generic kernel does not cover).
void expect_falls_back(const std::string& op, const std::function<Tensor()>& fn, const std::string& what) {
  reset_dispatch_counts();
  under("generic", fn);
  EXPECT_EQ(calls(op, Tier::generic), 0u) << what;
  EXPECT_GT(calls(op, Tier::reference), 0u) << what;
}

// Random normal values with some entries replaced by `specials` (row-major positions spread over the tensor).
Tensor with_specials(const Shape& shape, DType dtype, uint64_t seed, const std::vector<double>& specials,
                     double stddev = 1.0) {
  std::vector<double> v = randn(shape, DType::f64, seed, stddev).to_vector();
  for (size_t i = 0; i < specials.size() && !v.empty(); ++i) v[(i * 7919) % v.size()] = specials[i];
  return Tensor::from_vector(v, shape, dtype);
}

// Runs fn with one thread and with two; restores the thread count.
std::pair<Tensor, Tensor> one_and_two_threads(const std::function<Tensor()>& fn) {
  const int saved = num_threads();
  ScopedPolicy scope(Policy::parse("generic"));
  set_num_threads(1);
  Tensor one = fn();
  set_num_threads(2);
  Tensor two = fn();
  set_num_threads(saved);
  return {one, two};
}

const std::vector<Shape> kRowShapes = {{1}, {7}, {3, 33}, {2, 3, 1000}, {4, 0}, {0, 7}, {1, 1}};

// ---------------------------------------------------------------- softmax, log_softmax

TEST(GenericSoftmax, MatchesReferenceOnOddEmptyAndStridedShapes) {
  for (DType dtype : kGenericTypes)
    for (const Shape& shape : kRowShapes) {
      const Tensor x = randn(shape, dtype, 3, 4.0);
      for (const Tensor& in : {x, non_contiguous(x)}) {
        const std::string what = std::string(dtype_name(dtype)) + " " + shape_string(shape);
        expect_generic_matches("softmax", [&] { return softmax(in, -1); }, rtol(dtype), 1e-7, what);
        expect_generic_matches("log_softmax", [&] { return log_softmax(in, -1); }, rtol(dtype), 1e-5, what);
      }
    }
}

TEST(GenericSoftmax, AllMinusInfRowsNaNAndInfMatchReference) {
  // Row 0 all -inf (NaN, 0/0), row 1 holds a NaN, row 2 a +inf, row 3 one -inf among finite values.
  const std::vector<double> v = {-kInf, -kInf, -kInf, -kInf, 1, kNaN, 2, 3, 1, kInf, 2, 3, -kInf, 0, 1, 2};
  for (DType dtype : kGenericTypes) {
    const Tensor x = Tensor::from_vector(v, {4, 4}, dtype);
    expect_generic_matches("softmax", [&] { return softmax(x, 1); }, rtol(dtype), 1e-7, "softmax specials");
    expect_generic_matches("log_softmax", [&] { return log_softmax(x, 1); }, rtol(dtype), 1e-6, "log_softmax specials");
    const Tensor y = under("generic", [&] { return softmax(x, 1); });
    for (double e : y.select(0, 0).to_vector()) EXPECT_TRUE(std::isnan(e));
    for (double e : y.select(0, 1).to_vector()) EXPECT_TRUE(std::isnan(e));
    EXPECT_EQ(y.select(0, 3).to_vector()[0], 0.0);
  }
}

TEST(GenericSoftmax, OtherDimsAndF64RunOnTheReference) {
  const Tensor x = randn({5, 6}, DType::f32, 1);
  expect_falls_back("softmax", [&] { return softmax(x, 0); }, "softmax dim 0");
  expect_falls_back("log_softmax", [&] { return log_softmax(x, 0); }, "log_softmax dim 0");
  const Tensor x64 = randn({5, 6}, DType::f64, 1);
  expect_falls_back("softmax", [&] { return softmax(x64, -1); }, "softmax f64");
  expect_falls_back("log_softmax", [&] { return log_softmax(x64, -1); }, "log_softmax f64");
}

TEST(GenericSoftmax, OneAndTwoThreadsAgree) {
  const Tensor x = randn({64, 1000}, DType::f32, 5, 3.0);
  auto [a, b] = one_and_two_threads([&] { return softmax(x, -1); });
  EXPECT_TRUE(all_close(a, b, 1e-6, 0));
  auto [c, d] = one_and_two_threads([&] { return log_softmax(x, -1); });
  EXPECT_TRUE(all_close(c, d, 1e-6, 1e-6));
}

// ---------------------------------------------------------------- constant_pad_nd

TEST(GenericPad, BitExactForEveryCoveredDTypeIncludingNegativePads) {
  const std::vector<std::vector<int64_t>> pad_lists = {
      {}, {1, 2}, {0, 0, 3, 1}, {-1, 2}, {2, -3, -1, 1}, {-5, 1}, {1, 1, 1, 1, 1, 1}, {-2, -2, 0, 0, -1, -1}};
  for (DType dtype : testing::kAllDTypes) {
    if (dtype == DType::f64) continue;
    const Tensor x = testing::random_bits({3, 4, 5}, dtype, 7);
    for (const Tensor& in : {x, non_contiguous(x)})
      for (const std::vector<int64_t>& pads : pad_lists)
        for (double value : {0.0, 1.0}) {
          reset_dispatch_counts();
          const Tensor got = under("pad=generic", [&] { return constant_pad_nd(in, pads, value); });
          EXPECT_GT(calls("constant_pad_nd", Tier::generic), 0u);
          const Tensor want = under("reference", [&] { return constant_pad_nd(in, pads, value); });
          EXPECT_TRUE(testing::bit_equal(got, want)) << dtype_name(dtype) << " pads " << shape_string(pads);
        }
  }
}

TEST(GenericPad, EmptyAndScalarInputs) {
  for (const Shape& shape : {Shape{0, 3}, Shape{2, 0}, Shape{}}) {
    const Tensor x = randn(shape, DType::bf16, 2);
    const std::vector<int64_t> pads = shape.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{1, 2, 0, 1};
    const Tensor got = under("pad=generic", [&] { return constant_pad_nd(x, pads, -3.0); });
    const Tensor want = under("reference", [&] { return constant_pad_nd(x, pads, -3.0); });
    EXPECT_TRUE(testing::bit_equal(got, want)) << shape_string(shape);
  }
}

TEST(GenericPad, F64RunsOnTheReference) {
  const Tensor x = randn({3, 4}, DType::f64, 1);
  expect_falls_back("constant_pad_nd", [&] { return constant_pad_nd(x, {1, 1}, 0.0); }, "pad f64");
}

TEST(GenericPad, OneAndTwoThreadsGiveTheSameBytes) {
  const Tensor x = non_contiguous(testing::random_bits({8, 70, 130}, DType::bf16, 9));
  auto [a, b] = one_and_two_threads([&] { return constant_pad_nd(x, {3, -2, 1, 4, -1, 2}, 2.0); });
  EXPECT_TRUE(testing::bit_equal(a, b));
}

// ---------------------------------------------------------------- linear

TEST(GenericLinear, MatchesReferenceOnOddShapesAndLayouts) {
  struct Case { int64_t m, n, k; };
  const Case cases[] = {{1, 1, 1}, {1, 7, 33}, {7, 33, 7}, {33, 65, 1000}, {1, 70, 1000}, {3, 5, 0}, {0, 4, 3},
                        {2, 0, 3}};
  for (DType dtype : kGenericTypes)
    for (const Case& c : cases)
      for (bool with_bias : {false, true}) {
        const Tensor x = randn({c.m, c.k}, dtype, 11), w = randn({c.n, c.k}, dtype, 12);
        const Tensor b = randn({c.n}, dtype, 13);
        const std::string what =
            fmt::format("{} m{} n{} k{} bias {}", dtype_name(dtype), c.m, c.n, c.k, with_bias);
        const double at = rtol(dtype) * std::sqrt(static_cast<double>(std::max<int64_t>(c.k, 1)));
        for (bool strided : {false, true}) {
          const Tensor xi = strided ? non_contiguous(x) : x, wi = strided ? non_contiguous(w) : w;
          expect_generic_matches(
              "linear", [&] { return linear(xi, wi, with_bias ? OptTensor(b) : std::nullopt); }, rtol(dtype), at,
              what + (strided ? " strided" : ""));
        }
      }
}

TEST(GenericLinear, LeadingDimsNaNAndInf) {
  for (DType dtype : kGenericTypes) {
    const Tensor x = with_specials({2, 3, 40}, dtype, 21, {kNaN, kInf, -kInf});
    const Tensor w = randn({9, 40}, dtype, 22), b = randn({9}, dtype, 23);
    expect_generic_matches("linear", [&] { return linear(x, w, b); }, rtol(dtype), rtol(dtype) * 7, "specials");
  }
}

TEST(GenericLinear, F64RunsOnTheReference) {
  const Tensor x = randn({3, 4}, DType::f64, 1), w = randn({5, 4}, DType::f64, 2);
  expect_falls_back("linear", [&] { return linear(x, w); }, "linear f64");
}

TEST(GenericLinear, OneAndTwoThreadsAgree) {
  const Tensor x = randn({40, 300}, DType::bf16, 1), w = randn({130, 300}, DType::bf16, 2);
  auto [a, b] = one_and_two_threads([&] { return linear(x, w); });
  EXPECT_TRUE(all_close(a, b, 1e-2, 1e-2));
}

// ---------------------------------------------------------------- rms_norm

TEST(GenericRmsNorm, MatchesReferenceWithAndWithoutWeight) {
  for (DType dtype : kGenericTypes)
    for (const Shape& shape : {Shape{1, 1}, Shape{7, 7}, Shape{3, 33}, Shape{2, 3, 1000}, Shape{0, 5}}) {
      const Tensor x = randn(shape, dtype, 31, 2.0), w = randn({shape.back()}, dtype, 32);
      for (const Tensor& in : {x, non_contiguous(x)})
        for (bool with_weight : {false, true}) {
          const std::string what = fmt::format("{} {} weight {}", dtype_name(dtype), shape_string(shape), with_weight);
          expect_generic_matches(
              "rms_norm", [&] { return rms_norm(in, {shape.back()}, with_weight ? OptTensor(w) : std::nullopt); },
              rtol(dtype), rtol(dtype) * 1e-2, what);
          expect_generic_matches(
              "rms_norm", [&] { return rms_norm(in, {shape.back()}, non_contiguous(w), 1e-3); }, rtol(dtype),
              rtol(dtype) * 1e-2, what + " eps 1e-3");
        }
    }
}

TEST(GenericRmsNorm, NaNAndInfRows) {
  for (DType dtype : kGenericTypes) {
    const Tensor x = Tensor::from_vector({1, kNaN, 2, 3, kInf, 1, 1, 1, 0, 0, 0, 0}, {3, 4}, dtype);
    expect_generic_matches("rms_norm", [&] { return rms_norm(x, {4}); }, rtol(dtype), 0, "specials");
  }
}

TEST(GenericRmsNorm, F64RunsOnTheReferenceAndThreadsAgree) {
  const Tensor x64 = randn({3, 4}, DType::f64, 1);
  expect_falls_back("rms_norm", [&] { return rms_norm(x64, {4}); }, "rms_norm f64");
  const Tensor x = randn({100, 700}, DType::f32, 2), w = randn({700}, DType::f32, 3);
  auto [a, b] = one_and_two_threads([&] { return rms_norm(x, {700}, w); });
  EXPECT_TRUE(all_close(a, b, 1e-6, 0));
}

// ---------------------------------------------------------------- silu, gelu

const std::vector<double> kActivationSpecials = {kNaN, kInf, -kInf, 0.0, -0.0, -100.0, 100.0, -20.0, 20.0};

TEST(GenericActivations, MatchReferenceIncludingSpecials) {
  for (DType dtype : kGenericTypes)
    for (const Shape& shape : {Shape{1}, Shape{7}, Shape{3, 33}, Shape{5, 1000}, Shape{0, 3}, Shape{}}) {
      const Tensor x = with_specials(shape, dtype, 41, shape_numel(shape) >= 9 ? kActivationSpecials
                                                                                : std::vector<double>{}, 3.0);
      for (const Tensor& in : {x, x.dim() >= 2 ? non_contiguous(x) : x}) {
        const std::string what = fmt::format("{} {}", dtype_name(dtype), shape_string(shape));
        // atol: for x << 0 gelu's 1 + erf(x / sqrt 2) (or 1 + tanh) cancels in f32, an absolute error of a few
        // f32 ulps of 1 times |x|, as PyTorch's own f32 kernel has; silu(-100) ~ -4e-42 becomes -0 in f32.
        expect_generic_matches("silu", [&] { return silu(in); }, rtol(dtype), 1e-30, what);
        expect_generic_matches("gelu", [&] { return gelu(in); }, rtol(dtype), 1e-5, what);
        expect_generic_matches("gelu", [&] { return gelu(in, GeluApproximate::tanh); }, rtol(dtype), 1e-5,
                               what + " tanh");
      }
    }
}

TEST(GenericActivations, F64RunsOnTheReferenceAndThreadsAgree) {
  const Tensor x64 = randn({3, 4}, DType::f64, 1);
  expect_falls_back("silu", [&] { return silu(x64); }, "silu f64");
  expect_falls_back("gelu", [&] { return gelu(x64); }, "gelu f64");
  const Tensor x = randn({50, 1000}, DType::bf16, 2, 3.0);
  auto [a, b] = one_and_two_threads([&] { return silu(x); });
  EXPECT_TRUE(testing::bit_equal(a, b));   // elementwise: the split cannot change a value
  auto [c, d] = one_and_two_threads([&] { return gelu(x, GeluApproximate::tanh); });
  EXPECT_TRUE(testing::bit_equal(c, d));
}

// ---------------------------------------------------------------- add, mul

TEST(GenericBinary, MatchesReferenceWithBroadcastAndStrides) {
  for (DType dtype : kGenericTypes)
    for (const Shape& shape : {Shape{1}, Shape{7}, Shape{3, 33}, Shape{5, 1000}, Shape{0, 4}}) {
      const Tensor a = with_specials(shape, dtype, 51, shape_numel(shape) >= 3 ? std::vector<double>{kNaN, kInf, -kInf}
                                                                                : std::vector<double>{});
      const Tensor b = randn(shape, dtype, 52);
      const Tensor row = randn({shape.back()}, dtype, 53);
      const std::string what = fmt::format("{} {}", dtype_name(dtype), shape_string(shape));
      const Tensor an = a.dim() >= 2 ? non_contiguous(a) : a;
      expect_generic_matches("add", [&] { return add(a, b); }, rtol(dtype), 0, what);
      expect_generic_matches("add", [&] { return add(an, row, 2.0); }, rtol(dtype), 0, what + " broadcast alpha 2");
      expect_generic_matches("mul", [&] { return mul(a, b); }, rtol(dtype), 0, what);
      expect_generic_matches("mul", [&] { return mul(row, an); }, rtol(dtype), 0, what + " broadcast");
    }
}

TEST(GenericBinary, MixedDTypesAndF64RunOnTheReference) {
  const Tensor a = randn({3, 4}, DType::bf16, 1), b = randn({3, 4}, DType::f32, 2);
  expect_falls_back("add", [&] { return add(a, b); }, "add bf16 + f32");
  expect_falls_back("mul", [&] { return mul(a, b); }, "mul bf16 * f32");
  const Tensor c = randn({3, 4}, DType::f64, 3);
  expect_falls_back("add", [&] { return add(c, c); }, "add f64");
  const Tensor i = Tensor::from_vector({1, 2, 3}, {3}, DType::i32);
  expect_falls_back("mul", [&] { return mul(i, i); }, "mul i32");
}

TEST(GenericBinary, OneAndTwoThreadsGiveTheSameBytes) {
  const Tensor a = randn({80, 1000}, DType::f16, 1), b = randn({1000}, DType::f16, 2);
  auto [x, y] = one_and_two_threads([&] { return add(a, b, 0.5); });
  EXPECT_TRUE(testing::bit_equal(x, y));
  auto [z, w] = one_and_two_threads([&] { return mul(a, b); });
  EXPECT_TRUE(testing::bit_equal(z, w));
}

}  // namespace
}  // namespace fourfold
