// Force a tier at every ISA level the host has, count the dispatches, compare with the reference tier: the one
// helper the dedicated- and generic-tier tests share (tests/backends/dedicated_check.h, tier_check.h, the
// GEMM and the softmax tests build on it).
#pragma once

#include <functional>
#include <string>

#include "backends/cpu/isa.h"
#include "support/test_support.h"

namespace fourfold::testing {

// fn() with `policy` in force ("reference", "dedicated", "softmax=generic", ...).
template <class Fn>
auto under(const std::string& policy, const Fn& fn) {
  ScopedPolicy scope(Policy::parse(policy));
  return fn();
}

// Calls of `op` on `tier` since the dispatch counters were last reset; `variant` gets the op's last variant.
inline uint64_t calls_on(const std::string& op, Tier tier, std::string* variant = nullptr) {
  for (const DispatchCount& c : dispatch_counts())
    if (c.op == op) {
      if (variant != nullptr) *variant = c.last_variant;
      return c.calls[static_cast<int>(tier)];
    }
  return 0;
}

// Since the counters were last reset, exactly one call ran, on the dedicated tier under `isa`'s variant
// (dedicated = true) or on a slower tier (false).
inline ::testing::AssertionResult ran_one_call(bool dedicated, cpu::Isa isa) {
  const auto counts = dispatch_counts();
  const uint64_t* calls = counts.empty() ? nullptr : counts[0].calls;
  const bool one_call = counts.size() == 1 && calls[0] + calls[1] + calls[2] == 1;
  const bool ran_dedicated = one_call && calls[static_cast<int>(Tier::dedicated)] == 1;
  if (!one_call || ran_dedicated != dedicated || (dedicated && counts[0].last_variant != cpu::isa_name(isa)))
    return ::testing::AssertionFailure() << "expected " << (dedicated ? "the dedicated tier" : "a slower tier")
                                         << " to run at level " << cpu::isa_name(isa);
  return ::testing::AssertionSuccess();
}

// fn() on the reference once, then with the dedicated tier forced at every ISA level the host has: each run must
// be one call on the tier `dedicated` says (ran_one_call), and close(got, want) must hold.
template <class R>
::testing::AssertionResult dedicated_matches_at_every_level(
    const std::function<R()>& fn, bool dedicated,
    const std::function<::testing::AssertionResult(const R& got, const R& want)>& close) {
  const R want = under("reference", fn);
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    reset_dispatch_counts();
    const R got = under("dedicated", fn);
    if (::testing::AssertionResult ran = ran_one_call(dedicated, isa); !ran) return ran;
    if (::testing::AssertionResult c = close(got, want); !c) return c << " (level " << cpu::isa_name(isa) << ")";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace fourfold::testing
