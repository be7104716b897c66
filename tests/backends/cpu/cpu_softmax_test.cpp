// The dedicated CPU softmax and log_softmax, at every ISA level the host has: against the reference over odd
// sizes and vector tails, a 128,256-wide row split over threads, -inf / NaN / inf rows, what the tier declines,
// and the vectorized exp's error in ulp.
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/isa.h"
#include "backends/cpu/kernels/kernels.h"
#include "fourfold/parallel.h"
#include "support/tier_fixture.h"

namespace fourfold {
namespace {

using testing::all_close;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using SoftmaxFn = Tensor (*)(const Tensor&, int);

double rtol_for(DType t) { return t == DType::f32 ? 2e-6 : 1e-2; }
double atol_for(DType t) { return t == DType::f32 ? 2e-6 : 1e-4; }

// fn(x, dim) on the reference and with the dedicated tier forced; `dedicated` says whether that tier must have
// run (true) or must have left the call to a slower tier (false: the generic tier or the reference).
::testing::AssertionResult matches_reference(SoftmaxFn fn, const Tensor& x, int dim, bool dedicated, cpu::Isa isa) {
  const Tensor want = testing::under("reference", [&] { return fn(x, dim); });
  reset_dispatch_counts();
  const Tensor got = testing::under("dedicated", [&] { return fn(x, dim); });
  if (::testing::AssertionResult ran = testing::ran_one_call(dedicated, isa); !ran) return ran;
  return all_close(got, want, rtol_for(x.dtype()), atol_for(x.dtype())) << " (" << x.describe() << ", level "
                                                                           << cpu::isa_name(isa) << ")";
}

class CpuSoftmax : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { set_num_threads(GetParam()); }
  void TearDown() override { set_num_threads(threads_); }
  int threads_ = num_threads();
};

TEST_P(CpuSoftmax, OddSizesAndTailsMatchTheReference) {
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    uint64_t seed = 1;
    for (DType t : {DType::f32, DType::bf16, DType::f16})
      for (int64_t n : {1, 15, 17, 1000})
        for (SoftmaxFn fn : {&softmax, &log_softmax}) {
          const Tensor x = testing::randn({3, n}, t, seed++, 4.0);
          EXPECT_TRUE(matches_reference(fn, x, 1, true, isa));
          EXPECT_TRUE(matches_reference(fn, x.reshape({3, 1, n}), -1, true, isa));
        }
  }
}

// One vocabulary-wide row (split over threads when there are two) and a few rows (one per thread).
TEST_P(CpuSoftmax, VocabularyRows) {
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    uint64_t seed = 50;
    for (DType t : {DType::f32, DType::bf16, DType::f16})
      for (SoftmaxFn fn : {&softmax, &log_softmax}) {
        EXPECT_TRUE(matches_reference(fn, testing::randn({128256}, t, seed++, 3.0), 0, true, isa));
        EXPECT_TRUE(matches_reference(fn, testing::randn({2, 128256}, t, seed++, 3.0), 1, true, isa));
      }
  }
}

// Rows of all -inf give NaN (0/0), a NaN or a +inf anywhere makes the row NaN, -inf entries give 0 (-inf for
// log_softmax): as the reference, including when one of these sits in only one chunk of a split row.
TEST_P(CpuSoftmax, InfinitiesAndNaN) {
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    for (DType t : {DType::f32, DType::bf16, DType::f16})
      for (int64_t n : {5, 17, 70000}) {
        std::vector<double> v(5 * n);
        for (int64_t j = 0; j < n; ++j) {
          v[j] = -kInf;                                   // row 0: all -inf
          v[n + j] = j == n / 2 ? kNaN : 0.01 * (j % 7);  // row 1: one NaN
          v[2 * n + j] = j == n - 1 ? kInf : 1.0;         // row 2: one +inf
          v[3 * n + j] = j % 3 == 0 ? -kInf : 0.1 * (j % 5);   // row 3: some -inf
          // row 4: a vector lane that is -inf throughout while the row's max is far below 0 (exp(0 - max)
          // overflows: a kept-exp shift of 0 for that lane would make 0 * inf)
          v[4 * n + j] = j % 16 == 3 ? -kInf : -200.0 - 0.01 * (j % 11);
        }
        for (SoftmaxFn fn : {&softmax, &log_softmax}) {
          const Tensor x = Tensor::from_vector(v, {5, n}, t);
          EXPECT_TRUE(matches_reference(fn, x, 1, true, isa));
          for (int64_t r = 0; r < 5; ++r) EXPECT_TRUE(matches_reference(fn, x.select(0, r), 0, true, isa));
        }
      }
  }
}

TEST(CpuSoftmaxCovers, OtherDimsLayoutsAndDTypesFallBack) {
  const cpu::Isa isa = cpu::active_isa();
  const Tensor x = testing::randn({4, 6}, DType::f32, 3);
  EXPECT_TRUE(matches_reference(&softmax, x, 0, false, isa));
  EXPECT_TRUE(matches_reference(&softmax, testing::non_contiguous(x), 1, false, isa));
  EXPECT_TRUE(matches_reference(&log_softmax, x.to(DType::f64), 1, false, isa));
}

// Units in the last place between two floats of the same sign (or both zero).
int64_t ulp_distance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = std::numeric_limits<int32_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<int32_t>::min() - ib;
  return std::abs(static_cast<int64_t>(ia) - ib);
}

// The vectorized exp: <= 2 ulp against std::exp in double rounded to float, over [-110, 90] (overflow,
// subnormal results and underflow to 0 included), and the special values.
TEST(CpuExp, AccuracyWithinTwoUlp) {
  std::vector<float> x;
  for (double v = -110.0; v <= 90.0; v += 1.0 / 4099) x.push_back(static_cast<float>(v));
  for (float v = -1e-3f; v <= 1e-3f; v += 1e-7f) x.push_back(v);
  const float specials[] = {0.0f, -0.0f, 88.72283f, 88.7229f, -87.33654f, -103.27893f, -103.97208f, -104.0f,
                            std::numeric_limits<float>::denorm_min(), 1e-30f};
  x.insert(x.end(), std::begin(specials), std::end(specials));
  std::vector<float> y(x.size());
  // host_isas() runs from the host's best level down to scalar: the host has a level when its best is at least it.
  const cpu::Isa best = cpu::host_isas().front();
#define FOURFOLD_CHECK_EXP(level)                                                                         \
  if (best >= cpu::Isa::level) {                                                                          \
    cpu::level::exp_f32(x.data(), y.data(), static_cast<int64_t>(x.size()));                             \
    int64_t worst = 0;                                                                                    \
    float worst_x = 0;                                                                                    \
    for (size_t i = 0; i < x.size(); ++i) {                                                               \
      const int64_t d = ulp_distance(y[i], static_cast<float>(std::exp(static_cast<double>(x[i]))));     \
      if (d > worst) worst = d, worst_x = x[i];                                                           \
    }                                                                                                     \
    EXPECT_LE(worst, 2) << #level << " at x = " << worst_x;                                               \
    const float sp[] = {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),  \
                        std::numeric_limits<float>::quiet_NaN(), 1000.0f, -1000.0f};                      \
    float out[5];                                                                                         \
    cpu::level::exp_f32(sp, out, 5);                                                                      \
    EXPECT_EQ(out[0], 0.0f);                                                                              \
    EXPECT_EQ(out[1], std::numeric_limits<float>::infinity());                                            \
    EXPECT_TRUE(std::isnan(out[2]));                                                                      \
    EXPECT_EQ(out[3], std::numeric_limits<float>::infinity());                                            \
    EXPECT_EQ(out[4], 0.0f);                                                                              \
  }
  FOURFOLD_ISA_LEVELS(FOURFOLD_CHECK_EXP)
#undef FOURFOLD_CHECK_EXP
}

INSTANTIATE_TEST_SUITE_P(Threads, CpuSoftmax, ::testing::Values(1, 2));

}  // namespace
}  // namespace fourfold
