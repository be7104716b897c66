// The generic tier's matmul/bmm (real and complex64) and linear_backward against the reference tier: dtypes,
// broadcast batches, strided inputs, empty dims, NaN/inf, 1 vs 2 threads; the dispatch counters show the
// generic tier ran.
#include <cmath>
#include <functional>
#include <limits>

#include "fourfold/parallel.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::all_close;
using testing::randn;
using Results = std::vector<Tensor>;
using Fn = std::function<Results()>;

testing::Tolerance tolerance(DType t) {
  const testing::Tolerance p = testing::product_tolerance(t);
  return {std::max(p.rtol, 1e-5), p.atol + 2e-5};
}

::testing::AssertionResult generic_matches(const Fn& fn) {
  Results want;
  {
    testing::ReferenceOnly ref;
    want = fn();
  }
  reset_dispatch_counts();
  Results got;
  {
    ScopedPolicy forced(Policy::parse("generic"));
    got = fn();
  }
  const auto counts = dispatch_counts();
  if (counts.size() != 1 || counts[0].calls[static_cast<int>(Tier::generic)] != 1)
    return ::testing::AssertionFailure() << "the generic tier did not run";
  for (size_t i = 0; i < want.size(); ++i) {
    if (!want[i].defined()) continue;
    const testing::Tolerance tol = tolerance(got[i].dtype());
    auto r = all_close(got[i], want[i], tol.rtol, tol.atol);
    if (!r) return r << " (result " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

Fn mm(const Tensor& a, const Tensor& b) {
  return [=] { return Results{matmul(a, b)}; };
}

Fn backward(const Tensor& g, const Tensor& x, const Tensor& w, bool bias) {
  return [=] {
    const LinearGrads r = linear_backward(g, x, w, bias);
    return Results{r.grad_x, r.grad_weight, r.grad_bias};
  };
}

TEST(GenericMatmul, RealDTypesBroadcastStridedEmpty) {
  uint64_t seed = 1;
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    EXPECT_TRUE(generic_matches(mm(randn({2, 1, 13, 37}, t, seed++), randn({3, 37, 45}, t, seed++))));
    const Tensor a = randn({4, 33, 20}, t, seed++), b = randn({4, 20, 9}, t, seed++);
    EXPECT_TRUE(generic_matches([=] { return Results{bmm(testing::non_contiguous(a), testing::non_contiguous(b))}; }));
    EXPECT_TRUE(generic_matches(mm(randn({20}, t, seed++), randn({20}, t, seed++))));
    EXPECT_TRUE(generic_matches(mm(Tensor::empty({5, 0}, t), Tensor::empty({0, 7}, t))));
  }
  std::vector<double> v = randn({6, 5}, DType::f32, 9).to_vector();
  v[7] = std::nan("");
  v[20] = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(generic_matches(mm(Tensor::from_vector(v, {6, 5}, DType::f32), randn({5, 4}, DType::f32, 10))));
}

TEST(GenericMatmul, Complex64) {
  EXPECT_TRUE(generic_matches(mm(randn({2, 1, 11, 19}, DType::complex64, 20), randn({3, 19, 23}, DType::complex64, 21))));
  const Tensor at = randn({19, 11}, DType::complex64, 22).transpose(0, 1);
  EXPECT_TRUE(generic_matches(mm(at, randn({19, 5}, DType::complex64, 23))));
}

TEST(GenericLinearBackward, DTypesBiasStridedEmpty) {
  uint64_t seed = 30;
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (bool bias : {false, true}) {
      const Tensor x = randn({13, 40}, t, seed++), w = randn({33, 40}, t, seed++), g = randn({13, 33}, t, seed++);
      EXPECT_TRUE(generic_matches(backward(g, x, w, bias)));
      EXPECT_TRUE(generic_matches(
          backward(testing::non_contiguous(g), testing::non_contiguous(x), testing::non_contiguous(w), bias)));
    }
  EXPECT_TRUE(generic_matches(
      backward(Tensor::empty({0, 3}, DType::f32), Tensor::empty({0, 4}, DType::f32), randn({3, 4}, DType::f32, 40), true)));
}

TEST(GenericGemmOps, OneAndTwoThreadsAgree) {
  ScopedPolicy forced(Policy::parse("generic"));
  const Tensor a = randn({3, 50, 60}, DType::complex64, 50), b = randn({3, 60, 70}, DType::complex64, 51);
  const Tensor x = randn({70, 90}, DType::f32, 52), w = randn({80, 90}, DType::f32, 53), g = randn({70, 80}, DType::f32, 54);
  set_num_threads(1);
  const Tensor c1 = bmm(a, b);
  const LinearGrads g1 = linear_backward(g, x, w, true);
  set_num_threads(2);
  const Tensor c2 = bmm(a, b);
  const LinearGrads g2 = linear_backward(g, x, w, true);
  EXPECT_TRUE(testing::bit_equal(c1, c2));
  EXPECT_TRUE(testing::bit_equal(g1.grad_x, g2.grad_x));
  EXPECT_TRUE(testing::bit_equal(g1.grad_weight, g2.grad_weight));
  EXPECT_TRUE(all_close(g1.grad_bias, g2.grad_bias, 1e-6, 1e-6));
}

}  // namespace
}  // namespace fourfold
