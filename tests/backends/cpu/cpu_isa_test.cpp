// The dedicated CPU tier's ISA levels: host detection, the FOURFOLD_ISA setting and its errors, forcing a level,
// and the level's name as the dispatched variant.
#include "backends/cpu/isa.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using cpu::Isa;

TEST(CpuIsa, HostLevelsBestFirstEndingWithScalar) {
  const auto host = cpu::host_isas();
  ASSERT_FALSE(host.empty());
  EXPECT_EQ(host.back(), Isa::scalar);
  for (size_t i = 1; i < host.size(); ++i) EXPECT_EQ(static_cast<int>(host[i]), static_cast<int>(host[i - 1]) - 1);
}

TEST(CpuIsa, SettingPicksTheNamedLevelOrTheBest) {
  const auto host = cpu::host_isas();
  EXPECT_EQ(cpu::parse_isa_setting(nullptr, host), host.front());
  EXPECT_EQ(cpu::parse_isa_setting("", host), host.front());
  for (Isa i : host) EXPECT_EQ(cpu::parse_isa_setting(std::string(cpu::isa_name(i)).c_str(), host), i);
}

TEST(CpuIsa, BadSettingsNameTheVariableAndTheHostLevels) {
  const std::vector<Isa> host = {Isa::avx2, Isa::scalar};
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { cpu::parse_isa_setting("avx512", host); },
                                               {"FOURFOLD_ISA", "avx2, scalar", "'avx512'", "lacks"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { cpu::parse_isa_setting("sse9", host); },
                                               {"FOURFOLD_ISA", "avx2, scalar", "'sse9'", "not a level"}));
  EXPECT_TRUE(testing::throws_with<ValueError>([&] { cpu::parse_isa_setting("AVX2", host); }, {"FOURFOLD_ISA"}));
}

TEST(CpuIsa, ForcingALevelTheHostLacksFails) {
  const auto host = cpu::host_isas();
  if (host.front() == Isa::amx) GTEST_SKIP() << "the host has every level";
  EXPECT_TRUE(testing::throws_with<ValueError>([] { cpu::set_active_isa(Isa::amx); }, {"amx"}));
}

TEST(CpuIsa, EachLevelIsTheDispatchedVariant) {
  ScopedPolicy dedicated(Policy::parse("dedicated"));
  for (Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    EXPECT_EQ(cpu::active_isa(), isa);
    reset_dispatch_counts();
    softmax(Tensor::zeros({2, 3}, DType::f32), 1);
    const auto counts = dispatch_counts();
    ASSERT_EQ(counts.size(), 1u);
    EXPECT_EQ(counts[0].calls[static_cast<int>(Tier::dedicated)], 1u);
    EXPECT_EQ(counts[0].last_variant, cpu::isa_name(isa));
  }
}

}  // namespace
}  // namespace fourfold
