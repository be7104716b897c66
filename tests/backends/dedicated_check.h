// The reference result of one op call, computed once, against the dedicated tier forced at every ISA level the
// host has (and which tier ran): shared by the dedicated-kernel tests.
#pragma once

#include <functional>

#include "support/tier_fixture.h"

namespace fourfold::testing {

// `dedicated`: whether the dedicated tier must run at each level (true) or must leave the call to a slower
// tier (false). tolerance(out dtype) gives the closeness bound.
inline ::testing::AssertionResult matches_at_every_level(const std::function<Tensor()>& call, bool dedicated,
                                                         Tolerance (*tolerance)(DType)) {
  return dedicated_matches_at_every_level<Tensor>(call, dedicated, [&](const Tensor& got, const Tensor& want) {
    const Tolerance t = tolerance(want.dtype());
    return all_close(got, want, t.rtol, t.atol);
  });
}

inline Tolerance exact(DType) { return {0.0, 0.0}; }

}  // namespace fourfold::testing
