// The manifest every record carries (DESIGN.md section 2): what ran, where, how it was dispatched, and on
// which workload. Two record sets compare only when their workloads are equal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fourfold {

enum class WorkloadKind { op_suite, model, preset, memory };
std::string_view workload_kind_name(WorkloadKind kind);   // "op_suite", "model", "preset", "memory"
std::optional<WorkloadKind> parse_workload_kind(std::string_view name);

// What was run. A model workload names its config hash; a synthetic one its preset and seed.
struct Workload {
  WorkloadKind kind = WorkloadKind::op_suite;
  std::string name;                       // suite, model, preset or memory workload name
  std::string config_hash;                // model config.json hash; empty for synthetic workloads
  std::string preset;                     // synthetic preset; empty for a model from files
  uint64_t seed = 0;
  std::vector<std::string> shapes;        // as written by the suite, e.g. "4096x4096"
  std::vector<int64_t> context_lengths;   // prompt lengths of the throughput figures (empty: none)
  int64_t repeats = 0;                    // timed repeats per figure, after warm-up
  // Every other parameter that changes the work done, as "key=value" (a run's "gen=16", "sampling=greedy",
  // "prompt=fnv1a64:...", "activation=float32"): records whose lists differ are of different workloads.
  std::vector<std::string> parameters;
  bool operator==(const Workload&) const = default;
};

// First differing field of two workloads ("workload.shapes"), so a refusal can say what differs.
struct WorkloadMatch {
  bool equal = true;
  std::string field;                      // empty when equal
  std::string baseline, candidate;        // the two values of that field, as text
  explicit operator bool() const { return equal; }
};
WorkloadMatch workload_equal(const Workload& a, const Workload& b);

// How one op was dispatched during the workload (from fourfold::dispatch_counts).
struct OpDispatch {
  std::string op;
  uint64_t reference_calls = 0, generic_calls = 0, dedicated_calls = 0;
  std::string variant;                    // kernel variant last used, "" when unknown
  bool operator==(const OpDispatch&) const = default;
};
// "reference", "generic", "dedicated", or "mixed" when calls went to more than one tier.
std::string dispatch_tier(const OpDispatch& d);

// Opaque machine-state numbers measured around the workload by the probes; nullopt = not measured.
// A large drift between before and after says the machine changed under the run (throttling, a neighbour).
struct MachineState {
  std::optional<double> read_bandwidth_gb_per_s;
  std::optional<double> thread_latency_ns;     // thread-to-thread latency, as the probe defines it
  bool operator==(const MachineState&) const = default;
};

struct Manifest {
  // Who wrote the records when it was not fourfold itself: "PyTorch 2.15.0+cpu (git d0f2af8b66b2), eager"
  // (python/fourfold_torch). Empty for fourfold's own records, whose build fields say the rest.
  std::string producer;
  std::string fourfold_version, git_commit;
  std::string compiler, cxx_flags, build_type;
  bool sanitizers = false;
  std::string cpu_model;
  std::vector<std::string> isa_flags;           // what the host offers: "avx2", "fma", "avx512f", ...
  std::string isa_variant = "reference";        // what the kernels in use were compiled for
  int64_t threads = 1;
  std::string device = "cpu";
  std::vector<std::string> dtypes;              // PyTorch spelling: "float32", "bfloat16", ...
  std::string policy;                           // canonical Policy::to_string(); "" = no forcing
  std::vector<OpDispatch> op_tiers;
  Workload workload;
  MachineState machine_before, machine_after;
  bool operator==(const Manifest&) const = default;
};

// Fills the build, host, thread, policy and dispatch fields from this process; the caller provides the
// workload, dtypes, device and machine-state probes.
Manifest collect_manifest(const Workload& workload, std::vector<std::string> dtypes, std::string device = "cpu");

// A manifest field that differs between two record sets without preventing their comparison (build,
// machine, threads, policy, dispatch). Printed by compare, never refused.
struct ManifestDifference {
  std::string field, baseline, candidate;
};
std::vector<ManifestDifference> manifest_differences(const Manifest& baseline, const Manifest& candidate);

}  // namespace fourfold
