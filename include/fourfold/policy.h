// The force policy: which tier runs each op, so that every gain can be attributed to one kernel.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fourfold {

// Tiers from slowest to fastest. An op runs on the fastest tier whose kernel covers the call, unless the
// policy forces one; a forced tier that has no kernel for the call falls back to the next slower tier
// (reference covers everything), and the dispatch counters record the tier that really ran.
enum class Tier { reference = 0, generic = 1, dedicated = 2 };
inline constexpr int kTierCount = 3;
std::string_view tier_name(Tier tier);
Tier parse_tier(std::string_view name);   // ValueError naming the accepted names
// Whether this build has the tier's kernels (the reference tier always).
bool tier_built(Tier tier);

struct Policy {
  std::optional<Tier> all;                 // forces every op not named in per_op
  std::map<std::string, Tier> per_op;      // op name -> tier

  // "generic", "all=generic", "linear=reference,constant_pad_nd=generic", "" (no forcing).
  // Aliases: pad = constant_pad_nd, sdpa = scaled_dot_product_attention, bmm = matmul.
  // Unknown op or tier names are a ValueError that lists the valid ones.
  static Policy parse(std::string_view text);
  std::string to_string() const;           // canonical form, parse(to_string()) round-trips
  std::optional<Tier> forced_for(std::string_view op) const;
};

// The process-wide policy; starts from FOURFOLD_FORCE when set (a bad value throws on first use).
Policy current_policy();
void set_policy(const Policy& policy);

// Restores the previous policy when it goes out of scope.
class ScopedPolicy {
 public:
  explicit ScopedPolicy(const Policy& policy);
  ~ScopedPolicy();
  ScopedPolicy(const ScopedPolicy&) = delete;
  ScopedPolicy& operator=(const ScopedPolicy&) = delete;
 private:
  Policy previous_;
};

std::vector<std::string> op_names();        // in op-list order

// How many calls of each op ran on each tier, and the kernel variant last used (for manifests and tests).
struct DispatchCount {
  std::string op;
  uint64_t calls[kTierCount] = {0, 0, 0};
  std::string last_variant;
};
std::vector<DispatchCount> dispatch_counts();   // ops with at least one call
void reset_dispatch_counts();

}  // namespace fourfold
