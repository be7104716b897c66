// The reference result of one op call, computed once, against the dedicated tier forced at every ISA level the
// host has (and which tier ran): shared by the dedicated-kernel tests.
#pragma once

#include <functional>

#include "backends/cpu/isa.h"
#include "support/test_support.h"

namespace fourfold::testing {

// `dedicated`: whether the dedicated tier must run at each level (true) or must leave the call to a slower
// tier (false). tolerance(out dtype) gives the closeness bound.
inline ::testing::AssertionResult matches_at_every_level(const std::function<Tensor()>& call, bool dedicated,
                                                         Tolerance (*tolerance)(DType)) {
  Tensor want;
  {
    ReferenceOnly ref;
    want = call();
  }
  const Tolerance t = tolerance(want.dtype());
  for (cpu::Isa isa : cpu::host_isas()) {
    cpu::ScopedIsa level(isa);
    reset_dispatch_counts();
    Tensor got;
    {
      ScopedPolicy forced(Policy::parse("dedicated"));
      got = call();
    }
    const auto counts = dispatch_counts();
    const bool ran = counts.size() == 1 && counts[0].calls[static_cast<int>(Tier::dedicated)] == 1 &&
                     counts[0].last_variant == cpu::isa_name(isa);
    if (ran != dedicated)
      return ::testing::AssertionFailure() << "expected " << (dedicated ? "the dedicated tier" : "a slower tier")
                                           << " at level " << cpu::isa_name(isa);
    ::testing::AssertionResult close = all_close(got, want, t.rtol, t.atol);
    if (!close) return close << " (level " << cpu::isa_name(isa) << ")";
  }
  return ::testing::AssertionSuccess();
}

inline Tolerance exact(DType) { return {0.0, 0.0}; }

}  // namespace fourfold::testing
