// The force policy, its parsing, and the per-op dispatch counters.
#include "ops/dispatch.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "fourfold/errors.h"

namespace fourfold {
namespace {

constexpr std::array<const char*, kOpCount> kOpNames = {
#define FOURFOLD_OP_NAME(name, Args) #name,
    FOURFOLD_OP_LIST(FOURFOLD_OP_NAME)
#undef FOURFOLD_OP_NAME
};

struct Alias { const char* alias; const char* op; };
constexpr Alias kAliases[] = {
    {"pad", "constant_pad_nd"}, {"sdpa", "scaled_dot_product_attention"}, {"bmm", "matmul"}};

std::string canonical_op(std::string_view name) {
  for (const Alias& a : kAliases)
    if (name == a.alias) return a.op;
  for (const char* op : kOpNames)
    if (name == op) return op;
  std::string valid;
  for (const char* op : kOpNames) valid += fmt::format("{}{}", valid.empty() ? "" : ", ", op);
  fail<ValueError>("policy", "op", fmt::format("one of: {} (aliases pad, sdpa, bmm)", valid),
                   fmt::format("'{}'", name));
}

struct PolicyState {
  std::mutex mutex;
  Policy policy;
  std::array<std::optional<Tier>, kOpCount> forced{};   // resolved per OpId, read on every call
  bool loaded_env = false;
};

PolicyState& policy_state() {
  static PolicyState state;
  return state;
}

void resolve_locked(PolicyState& s) {
  for (int i = 0; i < kOpCount; ++i) s.forced[i] = s.policy.forced_for(kOpNames[i]);
}

void load_env_locked(PolicyState& s) {
  if (s.loaded_env) return;
  s.loaded_env = true;
  if (const char* env = std::getenv("FOURFOLD_FORCE")) s.policy = Policy::parse(env);
  resolve_locked(s);
}

struct Counters {
  std::array<std::array<std::atomic<uint64_t>, kTierCount>, kOpCount> calls{};
  std::array<std::atomic<const char*>, kOpCount> variant{};
};
Counters& counters() {
  static Counters c;
  return c;
}

bool log_dispatch() {
  static const bool enabled = std::getenv("FOURFOLD_LOG_DISPATCH") != nullptr;
  return enabled;
}

}  // namespace

std::string_view tier_name(Tier tier) {
  switch (tier) {
    case Tier::reference: return "reference";
    case Tier::generic: return "generic";
    case Tier::dedicated: return "dedicated";
  }
  return "?";
}

Tier parse_tier(std::string_view name) {
  for (int t = 0; t < kTierCount; ++t)
    if (name == tier_name(static_cast<Tier>(t))) return static_cast<Tier>(t);
  fail<ValueError>("policy", "tier", "one of: reference, generic, dedicated", fmt::format("'{}'", name));
}

Policy Policy::parse(std::string_view text) {
  Policy policy;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      policy.all = parse_tier(item);
    } else {
      std::string_view op = item.substr(0, eq);
      Tier tier = parse_tier(item.substr(eq + 1));
      if (op == "all") policy.all = tier;
      else policy.per_op[canonical_op(op)] = tier;
    }
  }
  return policy;
}

std::string Policy::to_string() const {
  std::string out;
  if (all) out = fmt::format("all={}", tier_name(*all));
  for (const auto& [op, tier] : per_op) out += fmt::format("{}{}={}", out.empty() ? "" : ",", op, tier_name(tier));
  return out;
}

std::optional<Tier> Policy::forced_for(std::string_view op) const {
  auto it = per_op.find(std::string(op));
  if (it != per_op.end()) return it->second;
  return all;
}

Policy current_policy() {
  PolicyState& s = policy_state();
  std::lock_guard lock(s.mutex);
  load_env_locked(s);
  return s.policy;
}

void set_policy(const Policy& policy) {
  PolicyState& s = policy_state();
  std::lock_guard lock(s.mutex);
  s.loaded_env = true;
  s.policy = policy;
  resolve_locked(s);
}

ScopedPolicy::ScopedPolicy(const Policy& policy) : previous_(current_policy()) { set_policy(policy); }
ScopedPolicy::~ScopedPolicy() { set_policy(previous_); }

std::vector<std::string> op_names() { return {kOpNames.begin(), kOpNames.end()}; }

const char* op_name(OpId op) { return kOpNames[static_cast<int>(op)]; }

std::optional<Tier> forced_tier(OpId op) {
  PolicyState& s = policy_state();
  std::lock_guard lock(s.mutex);
  load_env_locked(s);
  return s.forced[static_cast<int>(op)];
}

const KernelTable* kernel_table(Tier tier) {
  switch (tier) {
    case Tier::reference: return &reference_kernels();
    case Tier::generic: return generic_kernels();
    case Tier::dedicated: return dedicated_kernels();
  }
  return nullptr;
}

bool tier_built(Tier tier) { return kernel_table(tier) != nullptr; }

void record_dispatch(OpId op, Tier tier, const char* variant) {
  Counters& c = counters();
  c.calls[static_cast<int>(op)][static_cast<int>(tier)].fetch_add(1, std::memory_order_relaxed);
  c.variant[static_cast<int>(op)].store(variant, std::memory_order_relaxed);
  if (log_dispatch()) std::fprintf(stderr, "[fourfold] %s -> %s (%s)\n", op_name(op), tier_name(tier).data(), variant);
}

std::vector<DispatchCount> dispatch_counts() {
  std::vector<DispatchCount> out;
  Counters& c = counters();
  for (int i = 0; i < kOpCount; ++i) {
    DispatchCount row;
    row.op = kOpNames[i];
    uint64_t total = 0;
    for (int t = 0; t < kTierCount; ++t) total += row.calls[t] = c.calls[i][t].load(std::memory_order_relaxed);
    if (total == 0) continue;
    const char* v = c.variant[i].load(std::memory_order_relaxed);
    row.last_variant = v ? v : "";
    out.push_back(std::move(row));
  }
  return out;
}

void reset_dispatch_counts() {
  Counters& c = counters();
  for (auto& op : c.calls)
    for (auto& n : op) n.store(0, std::memory_order_relaxed);
}

}  // namespace fourfold
