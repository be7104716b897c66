// The roofline probes with a tiny budget: every figure positive and finite, bandwidth in a sane range,
// every ISA this CPU has, and budgets checked.
#include <cmath>

#include "check/roofline_probes.h"
#include "fourfold/parallel.h"
#include "ops/kernel_isa.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

void expect_sane(const ProbeFigure& f, double low, double high, const char* what) {
  ASSERT_FALSE(f.samples.empty()) << what;
  for (double v : f.samples) {
    EXPECT_TRUE(std::isfinite(v)) << what;
    EXPECT_GT(v, 0.0) << what;
  }
  EXPECT_LE(f.min, f.median) << what;
  EXPECT_LE(f.median, f.max) << what;
  EXPECT_GT(f.median, low) << what;
  EXPECT_LT(f.median, high) << what;
}

TEST(RooflineProbes, TinyBudgetGivesPositiveFiniteFigures) {
  const RooflineProbe p = measure_roofline(ProbeBudget::tiny());
  EXPECT_EQ(p.threads, num_threads());
  EXPECT_EQ(p.isa, active_kernel_isa().name);
  EXPECT_EQ(p.read_gbs.samples.size(), 2u);
  // 16 MiB sits in caches here, so these are cache figures: still between 1 and 1000 GB/s on any CPU.
  expect_sane(p.read_gbs, 1.0, 1000.0, "read");
  expect_sane(p.write_gbs, 0.5, 1000.0, "write");
  expect_sane(p.copy_gbs, 0.5, 1000.0, "copy");
  expect_sane(p.fma_gflops, 0.5, 1e5, "fma");
  if (p.hop_measured) expect_sane(p.hop_ns, 1.0, 1e7, "hop");
  EXPECT_GT(p.seconds, 0.0);
  // Whether the kernel grants huge pages depends on its THP setting; never more than the buffer.
  EXPECT_LE(p.huge_page_bytes, p.buffer_bytes);
  const std::string text = describe_probe(p);
  EXPECT_NE(text.find("read"), std::string::npos);
  EXPECT_NE(text.find("FMA"), std::string::npos);
}

TEST(RooflineProbes, SmallPagesWhenAsked) {
  ProbeBudget budget = ProbeBudget::tiny();
  budget.huge_pages = false;
  budget.measure_latency = false;
  const RooflineProbe p = measure_roofline(budget);
  EXPECT_FALSE(p.huge_pages_requested);
  EXPECT_FALSE(p.hop_measured);
  EXPECT_NE(describe_probe(p).find("not requested"), std::string::npos);
  expect_sane(p.read_gbs, 1.0, 1000.0, "read");
}

TEST(RooflineProbes, ReadBandwidthOutsideTheCacheIsSane) {
  // 96 MiB: three times the 32 MB L3 of this machine; one thread.
  const int saved = num_threads();
  set_num_threads(1);
  Tensor buffer = Tensor::empty({int64_t{24} << 20}, DType::f32);
  const std::string isa = active_kernel_isa().name;
  probe_write_gbs(buffer.data(), buffer.nbytes(), isa);
  const double gbs = probe_read_gbs(buffer.data(), buffer.nbytes(), isa);
  set_num_threads(saved);
  // Wide bounds: a saturated shared machine measured 0.66 GB/s; a unit slip (MB vs GB) is off by 1000x.
  EXPECT_GT(gbs, 0.1);
  EXPECT_LT(gbs, 1000.0);
}

// Every level the host runs has its own loops (compiled with that level's flags); a level it lacks, or a name
// that is no level, is refused naming the probe.
TEST(RooflineProbes, EveryHostLevelRuns) {
  Tensor buffer = Tensor::empty({int64_t{1} << 20}, DType::f32);   // 4 MiB
  for (const std::string& isa : host_kernel_isas()) {
    SCOPED_TRACE(isa);
    EXPECT_GT(probe_write_gbs(buffer.data(), buffer.nbytes(), isa), 0.0);
    EXPECT_GT(probe_read_gbs(buffer.data(), buffer.nbytes(), isa), 0.0);
    EXPECT_GT(probe_copy_gbs(static_cast<char*>(buffer.data()) + buffer.nbytes() / 2, buffer.data(),
                             buffer.nbytes() / 2, isa), 0.0);
    EXPECT_GT(probe_fma_gflops(0.002, isa), 0.0);
    // The copy moved the first half's values: the write probe stored 1.0 everywhere.
    EXPECT_EQ(buffer.to_vector().back(), 1.0);
  }
  EXPECT_TRUE(testing::throws_with<UnsupportedError>([] { probe_fma_gflops(0.002, "sse9"); },
                                                     {"probe_fma_gflops", "isa", "'sse9'", "scalar"}));
}

// The bf16 dot-product probe runs at the levels with vdpbf16ps, is a positive figure that is named in the text,
// and refuses the others by name.
TEST(RooflineProbes, Bf16DotProbeAtTheLevelsThatHaveIt) {
  for (const std::string& isa : host_kernel_isas()) {
    SCOPED_TRACE(isa);
    const bool has = isa == "avx512bf16" || isa == "amx";
    ProbeBudget budget = ProbeBudget::tiny();
    budget.isa = isa;
    budget.measure_latency = false;
    const RooflineProbe p = measure_roofline(budget);
    EXPECT_EQ(p.isa, isa);
    ASSERT_EQ(p.bf16_dot_gflops.has_value(), has);
    ASSERT_EQ(p.amx_dot_gflops.has_value(), isa == "amx");
    if (has) {
      expect_sane(*p.bf16_dot_gflops, 0.5, 1e5, "bf16 dot");
      EXPECT_NE(describe_probe(p).find("bf16 dot peak"), std::string::npos);
    } else {
      EXPECT_TRUE(testing::throws_with<UnsupportedError>([&] { probe_bf16_dot_gflops(0.002, isa); },
                                                         {"probe_bf16_dot_gflops", "vdpbf16ps"}));
    }
    if (isa == "amx") {
      expect_sane(*p.amx_dot_gflops, 1.0, 1e6, "amx dot");
      EXPECT_NE(describe_probe(p).find("amx bf16 peak"), std::string::npos);
    } else {
      EXPECT_TRUE(testing::throws_with<UnsupportedError>([&] { probe_amx_dot_gflops(0.002, isa); },
                                                         {"probe_amx_dot_gflops", "AMX"}));
    }
  }
}

TEST(RooflineProbes, HopLatencyWhenTwoCpusExist) {
  int cpus[2] = {-1, -1};
  const std::optional<double> ns = probe_hop_ns(2000, cpus);
  if (!ns) GTEST_SKIP() << "fewer than two CPUs";
  EXPECT_TRUE(std::isfinite(*ns));
  EXPECT_GT(*ns, 1.0);
}

TEST(RooflineProbes, BadBudgetsAreValueErrors) {
  using testing::throws_with;
  ProbeBudget small = ProbeBudget::tiny();
  small.buffer_bytes = 1000;
  EXPECT_TRUE(throws_with<ValueError>([&] { measure_roofline(small); }, {"measure_roofline", "'buffer_bytes'"}));
  ProbeBudget none = ProbeBudget::tiny();
  none.repeats = 0;
  EXPECT_TRUE(throws_with<ValueError>([&] { measure_roofline(none); }, {"'repeats'"}));
  EXPECT_TRUE(throws_with<ValueError>([] { probe_hop_ns(0); }, {"'round_trips'"}));
}

}  // namespace
}  // namespace fourfold
