// Shared by the tier tests of the fused decoder ops, softmax backward and the generic norms: run an op on the
// reference tier and on a forced tier (at every host ISA level for the dedicated one), with one and two
// threads, and compare; the dispatch counters show which tier really ran.
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "fourfold/parallel.h"
#include "support/tier_fixture.h"

namespace fourfold::tier_check {

using Outputs = std::vector<Tensor>;
using Fn = std::function<Outputs()>;

struct Tol {
  double rtol, atol;
};
// f32: a few f32 roundings of the inputs' magnitude; bf16 / f16: one rounding of the result, plus an absolute
// floor where a rotation or a residual sum cancels.
inline Tol tol(DType t) { return t == DType::f32 ? Tol{2e-5, 2e-6} : Tol{1e-2, 2e-3}; }

inline uint64_t calls(const std::string& op, Tier tier, std::string* variant = nullptr) {
  return testing::calls_on(op, tier, variant);
}

inline Outputs under(const char* policy, const Fn& fn) { return testing::under(policy, fn); }

// Leaves NaN-filled blocks of the outputs' sizes in the caching allocator, so that the op's outputs likely
// start as NaN and an element a kernel forgets to write shows (best effort: the allocator picks the block).
inline void poison_cache(const Outputs& like) {
  Outputs poison;
  for (const Tensor& t : like)
    poison.push_back(Tensor::full(t.shape(), std::numeric_limits<double>::quiet_NaN(), t.dtype()));
}

// fn forced to `tier` must run `op` there (or, with covered = false, must leave it to a slower tier) and agree
// with the reference; with two threads it must give the same bits as with one (deterministic) or agree within
// the tolerance. Every host ISA level is forced in turn (the generic tier's loops are per level too).
inline void expect_matches(const std::string& op, Tier tier, const Fn& fn, Tol t, const std::string& what,
                           bool covered = true, bool deterministic = true) {
  const Outputs want = under("reference", fn);
  std::vector<cpu::Isa> levels = {cpu::active_isa()};
  if (tier == Tier::dedicated || tier == Tier::generic) levels = cpu::host_isas();
  const int saved = num_threads();
  for (cpu::Isa isa : levels) {
    cpu::ScopedIsa level(isa);
    const std::string where = what + " [" + std::string(tier_name(tier)) + ", " + std::string(cpu::isa_name(isa)) + "]";
    Outputs first;
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      poison_cache(want);
      reset_dispatch_counts();
      const Outputs got = under(std::string(tier_name(tier)).c_str(), fn);
      std::string variant;
      const uint64_t ran = calls(op, tier, &variant);
      if (covered) {
        EXPECT_GT(ran, 0u) << where << ": " << op << " did not run on the forced tier";
        if (tier == Tier::dedicated) {
          EXPECT_EQ(variant, cpu::isa_name(isa)) << where;
        }
      } else {
        EXPECT_EQ(ran, 0u) << where << ": expected a fallback";
      }
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].shape(), want[i].shape()) << where;
        EXPECT_TRUE(testing::all_close(got[i], want[i], t.rtol, t.atol)) << where << " output " << i;
        if (threads == 2) {
          if (deterministic) {
            EXPECT_TRUE(testing::bit_equal(got[i], first[i])) << where << " 1 vs 2 threads";
          } else {
            EXPECT_TRUE(testing::all_close(got[i], first[i], t.rtol, t.atol)) << where << " 1 vs 2 threads";
          }
        }
      }
      if (threads == 1) first = got;
    }
  }
  set_num_threads(saved);
}

// Random normal values with some entries replaced by `specials` (positions spread over the tensor).
inline Tensor with_specials(const Shape& shape, DType dtype, uint64_t seed, const std::vector<double>& specials,
                            double stddev = 1.0) {
  std::vector<double> v = testing::randn(shape, DType::f64, seed, stddev).to_vector();
  for (size_t i = 0; i < specials.size() && !v.empty(); ++i) v[(i * 7919 + 3) % v.size()] = specials[i];
  return Tensor::from_vector(v, shape, dtype);
}

// t's values with rows padded in memory: the last dim stays unit-stride, the row stride does not.
inline Tensor padded_rows(const Tensor& t) {
  Shape wide = t.shape();
  wide.back() += 5;
  Tensor w = Tensor::full(wide, 7.0, t.dtype());
  Tensor view = w.narrow(t.dim() - 1, 0, t.size(-1));
  view.copy_from(t);
  return view;
}

}  // namespace fourfold::tier_check
