// The manifest compared field by field between two record sets, and workloads matched (collect_manifest, which
// asks the running process, is in manifest_collect.cpp, so the records readers build without the machine).
#include "check/manifest.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>


namespace fourfold {
namespace {

constexpr std::string_view kKindNames[] = {"op_suite", "model", "preset", "memory"};

std::string text(const std::vector<std::string>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }
std::string text(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }
std::string text(const std::string& s) { return fmt::format("'{}'", s); }
template <class T>
std::string text(const T& v) {
  return fmt::format("{}", v);
}

}  // namespace

std::string_view workload_kind_name(WorkloadKind kind) { return kKindNames[static_cast<int>(kind)]; }

std::optional<WorkloadKind> parse_workload_kind(std::string_view name) {
  for (int i = 0; i < 4; ++i)
    if (kKindNames[i] == name) return static_cast<WorkloadKind>(i);
  return std::nullopt;
}

WorkloadMatch workload_equal(const Workload& a, const Workload& b) {
  WorkloadMatch m;
  // Fields in the order a reader would check them: what kind of run, which one, then its parameters.
  auto check = [&](const char* field, const auto& x, const auto& y) {
    if (m.equal && !(x == y)) {
      m = {false, field, text(x), text(y)};
    }
  };
  check("workload.kind", std::string(workload_kind_name(a.kind)), std::string(workload_kind_name(b.kind)));
  check("workload.name", a.name, b.name);
  check("workload.config_hash", a.config_hash, b.config_hash);
  check("workload.preset", a.preset, b.preset);
  check("workload.seed", a.seed, b.seed);
  check("workload.shapes", a.shapes, b.shapes);
  check("workload.context_lengths", a.context_lengths, b.context_lengths);
  check("workload.repeats", a.repeats, b.repeats);
  check("workload.parameters", a.parameters, b.parameters);
  return m;
}

std::string dispatch_tier(const OpDispatch& d) {
  const int used = (d.reference_calls > 0) + (d.generic_calls > 0) + (d.dedicated_calls > 0);
  if (used > 1) return "mixed";
  if (d.dedicated_calls > 0) return "dedicated";
  if (d.generic_calls > 0) return "generic";
  if (d.reference_calls > 0) return "reference";
  return "none";
}

std::vector<ManifestDifference> manifest_differences(const Manifest& a, const Manifest& b) {
  std::vector<ManifestDifference> out;
  auto check = [&](const char* field, const auto& x, const auto& y) {
    if (!(x == y)) out.push_back({field, text(x), text(y)});
  };
  check("producer", a.producer, b.producer);
  check("fourfold_version", a.fourfold_version, b.fourfold_version);
  check("git_commit", a.git_commit, b.git_commit);
  check("compiler", a.compiler, b.compiler);
  check("cxx_flags", a.cxx_flags, b.cxx_flags);
  check("build_type", a.build_type, b.build_type);
  check("sanitizers", a.sanitizers, b.sanitizers);
  check("cpu_model", a.cpu_model, b.cpu_model);
  check("isa_flags", a.isa_flags, b.isa_flags);
  check("isa_variant", a.isa_variant, b.isa_variant);
  check("threads", a.threads, b.threads);
  check("device", a.device, b.device);
  check("dtypes", a.dtypes, b.dtypes);
  check("policy", a.policy, b.policy);
  // Per-op tiers: the usual point of a comparison, listed so that a gain can be attributed.
  auto tier_of = [](const std::vector<OpDispatch>& v, const std::string& op) -> std::string {
    for (const OpDispatch& d : v)
      if (d.op == op) return d.variant.empty() ? dispatch_tier(d) : dispatch_tier(d) + " (" + d.variant + ")";
    return "not called";
  };
  std::vector<std::string> ops;
  for (const auto* v : {&a.op_tiers, &b.op_tiers})
    for (const OpDispatch& d : *v)
      if (std::find(ops.begin(), ops.end(), d.op) == ops.end()) ops.push_back(d.op);
  for (const std::string& op : ops) {
    const std::string x = tier_of(a.op_tiers, op), y = tier_of(b.op_tiers, op);
    if (x != y) out.push_back({"op_tiers." + op, x, y});
  }
  return out;
}

}  // namespace fourfold
