// The generated test of every tier: each op's correctness cases (OpCases::sweep, the one list `fourfold sweep` runs on
// the reference tier) run again on the generic and dedicated tiers at every ISA level this host runs, with one and
// two threads, in f32 and bf16, and each output is held to the reference tier's on the same inputs: within the op's
// ULP bound (check's verdict, src/check/op_cases/op_case.h) for bf16, within a few f32 roundings for f32. A new op's
// cases join by being written; a level the CI host runs but never picks is still judged. Which tier really ran
// is not asserted here (a case may fall back): the family tests in tests/backends/ hold coverage.
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backends/tier_check.h"
#include "check/error_metrics.h"
#include "check/op_cases/op_case.h"

namespace fourfold {
namespace {

struct SweepParam {
  const OpCases* entry;
  size_t index;
  DType dtype;
};

std::vector<SweepParam> all_cases() {
  std::vector<SweepParam> params;
  for (const OpCases& e : all_op_cases())
    for (size_t i = 0; i < e.sweep.size(); ++i)
      for (DType dt : {DType::f32, DType::bf16}) params.push_back({&e, i, dt});
  return params;
}

class EveryTierSweep : public ::testing::TestWithParam<SweepParam> {};

// f32 outputs: the tiers sum in their own orders, so a few f32 roundings of the output's magnitude.
bool close_in_f32(const Tensor& got, const Tensor& want) { return testing::all_close(got, want, 1e-4, 1e-5); }

TEST_P(EveryTierSweep, MatchesTheReferenceTierAtEveryLevel) {
  const SweepParam& p = GetParam();
  const SweepCase& c = p.entry->sweep[p.index];
  const auto run = [&] {
    SweepInputs in(p.dtype, p.dtype, 7);
    return tier_check::Outputs{c.run(in)};
  };
  const Tensor want = tier_check::under("reference", run)[0];
  const int64_t bound = ulp_bound_of(p.entry->op) + c.max_ulp;
  const int saved = num_threads();
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    for (const char* tier : {"generic", "dedicated"})
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        const std::string where = fmt::format("{} {} [{}, {}, {} thread(s)]", p.entry->op, c.shapes, tier,
                                              cpu::isa_name(isa), threads);
        const Tensor got = tier_check::under(tier, run)[0];
        ASSERT_EQ(got.shape(), want.shape()) << where;
        ASSERT_EQ(got.dtype(), want.dtype()) << where;
        if (got.dtype() == DType::f32 || got.dtype() == DType::f64) {
          EXPECT_TRUE(close_in_f32(got, want)) << where;
        } else {
          // Within the op's ULP bound, or, where an f32 intermediate cancels (gelu's 1 + tanh near -1), within
          // a thousandth of the output's peak: below what the output dtype resolves at the tensor's scale.
          const ErrorStats e = compare_to_reference(got, want);
          EXPECT_TRUE(e.max_ulp <= bound || e.max_abs <= 1e-3 * e.peak)
              << where << ": max ULP " << e.max_ulp << " (bound " << bound << "), max abs " << e.max_abs
              << " against a peak of " << e.peak;
          EXPECT_EQ(e.nan_mismatches, 0) << where;
        }
      }
  }
  set_num_threads(saved);
}

INSTANTIATE_TEST_SUITE_P(Sweep, EveryTierSweep, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<SweepParam>& info) {
                           std::string name = fmt::format("{}_{}_{}", info.param.entry->op, info.param.index,
                                                          dtype_name(info.param.dtype));
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace fourfold
