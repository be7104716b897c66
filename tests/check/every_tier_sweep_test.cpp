// The generated test of every tier: each op's correctness cases (OpCases::sweep, the one list `fourfold sweep` runs on
// the reference tier) run again on the generic and dedicated tiers at every ISA level this host runs, with one and
// two threads, in f32, bf16 and f16, and each output is held to the reference tier's on the same inputs: within the
// op's ULP bound (check's verdict, src/check/op_cases/op_case.h) for bf16 and f16, within a few f32 roundings for f32. A new op's
// cases join by being written; a level the CI host runs but never picks is still judged. A case may fall back to
// a slower tier: EveryTierSweep.CountsWhatFallsBack prints how many combinations did, and holds the decoder's
// ops to their dedicated kernels at every level; the family tests in tests/backends/ hold the rest of coverage.
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
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
      for (DType dt : {DType::f32, DType::bf16, DType::f16}) params.push_back({&e, i, dt});
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

// Every op case x dtype x tier x level once (one thread), counting where the tier asked for did not run the op.
TEST(EveryTierSweep, CountsWhatFallsBack) {
  struct Tally {
    int asked = 0, fell_back = 0;
  };
  std::map<std::string, Tally> by_tier_and_level;
  std::map<std::string, std::set<std::string>> dedicated_levels_of_op;   // the levels whose kernel ran it
  std::map<std::string, std::vector<std::string>> unsupported;   // op, case, dtype and tier: the levels
  const int saved = num_threads();
  set_num_threads(1);
  for (const OpCases& e : all_op_cases())
    for (const SweepCase& c : e.sweep)
      for (DType dtype : {DType::f32, DType::bf16, DType::f16})
        for (cpu::Isa isa : cpu::host_isas()) {
          cpu::ScopedIsa level(isa);
          for (Tier tier : {Tier::generic, Tier::dedicated}) {
            reset_dispatch_counts();
            tier_check::under(std::string(tier_name(tier)).c_str(), [&] {
              SweepInputs in(dtype, dtype, 7);
              return tier_check::Outputs{c.run(in)};
            });
            const bool ran = tier_check::calls(std::string(e.op), tier) > 0;
            const std::string key = fmt::format("{} at {}", tier_name(tier), cpu::isa_name(isa));
            ++by_tier_and_level[key].asked;
            if (!ran) {
              ++by_tier_and_level[key].fell_back;
              unsupported[fmt::format("{} {} {}, {}", e.op, c.shapes, dtype_name(dtype), tier_name(tier))].push_back(
                  std::string(cpu::isa_name(isa)));
            } else if (tier == Tier::dedicated) {
              dedicated_levels_of_op[std::string(e.op)].insert(std::string(cpu::isa_name(isa)));
            }
          }
        }
  set_num_threads(saved);
  int total = 0, fell = 0;
  for (const auto& [key, t] : by_tier_and_level) {
    std::cout << "every-tier sweep: " << key << ": " << t.asked - t.fell_back << " of " << t.asked
              << " combinations ran on the tier asked, " << t.fell_back << " fell back\n";
    total += t.asked;
    fell += t.fell_back;
  }
  std::cout << "every-tier sweep: " << fell << " of " << total << " combinations unsupported on the tier asked\n";
  for (const auto& [what, levels] : unsupported)
    std::cout << "  fell back: " << what << " at " << fmt::format("{}", fmt::join(levels, " ")) << "\n";
  RecordProperty("combinations", total);
  RecordProperty("unsupported", fell);
  EXPECT_GT(total, 0);
  // The decoder's hot ops have a dedicated kernel at every level the host runs: a level whose table lost one
  // would fall back to the generic tier without a word.
  for (const char* op : {"linear", "rms_norm", "softmax", "silu_mul", "scaled_dot_product_attention",
                         "rotary_embedding", "embedding", "topk", "causal_conv1d"})
    EXPECT_EQ(dedicated_levels_of_op[op].size(), cpu::host_isas().size()) << op;
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
