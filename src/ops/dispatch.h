// Routes one checked op call to a tier's kernel under the force policy, counts what ran, and times it while the
// op profile is on.
#pragma once

#include <optional>

#include "backends/kernel_table.h"
#include "fourfold/policy.h"
#include "ops/op_bytes.h"
#include "ops/op_profile.h"

namespace fourfold {

const KernelTable* kernel_table(Tier tier);
std::optional<Tier> forced_tier(OpId op);
void record_dispatch(OpId op, Tier tier, const char* variant);
const char* op_name(OpId op);

template <class Args>
void dispatch(OpId op, Kernel<Args> KernelTable::*entry, const Args& args) {
  const std::optional<Tier> forced = forced_tier(op);
  int tier = forced ? static_cast<int>(*forced) : kTierCount - 1;
  for (; tier >= 0; --tier) {
    const KernelTable* table = kernel_table(static_cast<Tier>(tier));
    if (table == nullptr) continue;
    const Kernel<Args>& kernel = table->*entry;
    if (kernel.run == nullptr || (kernel.covers != nullptr && !kernel.covers(args))) continue;
    record_dispatch(op, static_cast<Tier>(tier), kernel.variant);
    std::optional<ProfiledCall> timed;   // times the call to the end of this scope while profiling
    if (op_profile_wanted()) timed.emplace(op, tier, op_bytes(args));
    kernel.run(args);
    return;
  }
}

// FOURFOLD_DISPATCH(softmax, args): the op's OpId and table entry from one name.
#define FOURFOLD_DISPATCH(name, args) ::fourfold::dispatch(::fourfold::OpId::name, &::fourfold::KernelTable::name, args)

}  // namespace fourfold
