#include "check/check_runner.h"

#include <algorithm>

#include <fmt/format.h>

#include "check/memory_workload.h"
#include "check/op_bench.h"
#include "check/op_time_records.h"
#include "check/op_timer.h"
#include "check/roofline_probes.h"
#include "check/statistics.h"
#include "check/suites.h"
#include "fourfold/allocator.h"
#include "fourfold/errors.h"
#include "fourfold/policy.h"

namespace fourfold {
namespace {

struct Side {
  Policy policy;
  RecordSet records;
  std::vector<OpDispatch> dispatched;   // accumulated over this side's runs only
};

void accumulate_dispatch(std::vector<OpDispatch>& into) {
  for (const DispatchCount& d : dispatch_counts()) {
    auto it = std::find_if(into.begin(), into.end(), [&](const OpDispatch& o) { return o.op == d.op; });
    if (it == into.end()) it = into.insert(into.end(), OpDispatch{d.op, 0, 0, 0, ""});
    it->reference_calls += d.calls[static_cast<int>(Tier::reference)];
    it->generic_calls += d.calls[static_cast<int>(Tier::generic)];
    it->dedicated_calls += d.calls[static_cast<int>(Tier::dedicated)];
    it->variant = d.last_variant;
  }
}

MachineState machine_state(const ProbeBudget& budget) {
  const RooflineProbe p = measure_roofline(budget);
  MachineState s;
  s.read_bandwidth_gb_per_s = p.read_gbs.median;
  if (p.hop_measured) s.thread_latency_ns = p.hop_ns.median;
  return s;
}

std::vector<BenchCase> selected_cases(const CheckOptions& o) {
  std::vector<BenchCase> out;
  for (const std::string& name : o.suites) {
    const Suite suite = load_suite(name, default_suites_dir());
    int taken = 0;
    const BenchCase* smallest = nullptr;
    for (const BenchCase& c : suite.cases) {
      if (smallest == nullptr || case_work(c) < case_work(*smallest)) smallest = &c;
      if (o.rows_per_suite > 0 && taken >= o.rows_per_suite) continue;
      if (o.reference_work_cap > 0 && case_work(c) > o.reference_work_cap) continue;
      out.push_back(c);
      ++taken;
    }
    if (taken == 0 && smallest != nullptr) out.push_back(*smallest);
  }
  return out;
}

}  // namespace

CheckResult run_check(const CheckOptions& o, const std::function<void(const std::string&)>& progress) {
  const auto say = [&](const std::string& m) {
    if (progress) progress(m);
  };
  if (o.repeats < 1) fail<ValueError>("check", "--repeats", ">= 1", std::to_string(o.repeats));
  Side sides[2] = {{Policy::parse(o.baseline), {}, {}}, {Policy::parse(o.candidate), {}, {}}};
  const std::vector<BenchCase> cases = selected_cases(o);

  say("probing the machine (bandwidth, FMA peak, thread latency)");
  const MachineState before = machine_state(o.probe_budget);
  ProbeBudget roof_budget = o.probe_budget;
  roof_budget.measure_latency = false;
  const RooflineProbe roof = measure_roofline(roof_budget);

  OpSuiteWorkload suite_workload = op_suite_workload(cases, o.suites, o.seed, o.repeats);
  Workload& workload = suite_workload.workload;
  std::vector<std::string>& dtypes = suite_workload.dtypes;
  workload.shapes.push_back(fmt::format("memory: tiled VAE-style pad workload, {} tiles", o.memory_tiles));

  for (Side& s : sides) {
    s.records.op_time.emplace();
    s.records.op_time->peak_read_gb_per_s = roof.read_gbs.median;
    s.records.op_time->peak_gflop_per_s = roof.fma_gflops.median;
    s.records.correctness.emplace();
  }

  // Op time and correctness: per row, inputs made once and shared; A B A B ... so that a change of the
  // machine's state between repeats hits both sides.
  reset_dispatch_counts();
  size_t index = 0;
  for (const BenchCase& c : cases) {
    say(fmt::format("[{}/{}] {} {} {}", ++index, cases.size(), c.op, c.name, c.shape));
    const BenchCall call = make_bench_call(c, o.seed);
    const OpCost cost = op_cost(c);
    // Both sides time the same sets; copy 0 is the one the correctness record checks. Rows both sides run on
    // the reference tier keep one set (at 100-1000x below memory speed their cache state does not show).
    const bool both_reference = [&] {
      for (const Side& s : sides) {
        ScopedPolicy scope(s.policy);
        if (expected_tier(c.op) != Tier::reference) return false;
      }
      return true;
    }();
    const int copies = both_reference ? 1 : rotation_copies(cost, o.rotate_bytes, 64);
    std::vector<BenchCall> timed{call};
    for (int i = 1; i < copies; ++i) timed.push_back(make_bench_call(c, rotation_seed(o.seed, i)));
    size_t next = 0;
    OpTimeRow rows[2] = {op_time_row_header(c), op_time_row_header(c)};
    TimerOptions timer;
    timer.warmup = 1;
    timer.samples = 1;
    for (int r = 0; r < o.repeats; ++r) {
      for (int side = 0; side < 2; ++side) {
        ScopedPolicy scope(sides[side].policy);
        const OpTiming t = time_op([&] {
          timed[next]();
          next = next + 1 == timed.size() ? 0 : next + 1;
        }, timer);
        rows[side].samples_us.push_back(t.median_us);
        rows[side].calls_per_sample = t.calls_per_sample;
        rows[side].warmup_calls = t.warmup;
        rows[side].input_copies = copies;
      }
    }
    const Tensor oracle = [&] {
      ScopedPolicy scope(Policy::parse("reference"));
      return make_bench_call(c, o.seed, /*float64_oracle=*/true)();
    }();
    for (int side = 0; side < 2; ++side) {
      reset_dispatch_counts();
      Tensor out;
      {
        ScopedPolicy scope(sides[side].policy);
        out = call();
      }
      const std::optional<TierRan> ran = tier_that_ran(c.op);
      rows[side].tier = ran ? ran->tier : "none";
      accumulate_dispatch(sides[side].dispatched);
      rows[side].bytes = cost.bytes();
      rows[side].flops = cost.flops;
      std::vector<double> sorted = rows[side].samples_us;
      const double median_seconds = median(sorted) * 1e-6;
      summarize_samples(rows[side], roofline_point(cost, median_seconds, roof).floor_us);
      sides[side].records.op_time->rows.push_back(rows[side]);
      sides[side].records.correctness->ops.push_back(correctness_row(
          c.op, rows[side].shape, rows[side].dtype, rows[side].tier, compare_to_reference(out, oracle)));
    }
    cpu_allocator().empty_cache();
  }

  // Memory, one side after the other (peaks cannot be interleaved), each from an emptied cache.
  for (Side& s : sides) {
    say(fmt::format("memory workload under policy '{}'", s.policy.to_string()));
    ScopedPolicy scope(s.policy);
    MemoryWorkloadOptions m;
    m.seed = o.seed;
    m.tiles = o.memory_tiles;
    s.records.memory = run_pad_memory_workload(m);
  }

  if (o.end_to_end.enabled) {
    const Policy policies[2] = {sides[0].policy, sides[1].policy};
    const EndToEndResult e2e = run_end_to_end(
        o.end_to_end, policies, [&](int side) { accumulate_dispatch(sides[side].dispatched); }, say);
    std::string contexts;
    for (int64_t c : o.end_to_end.decode_contexts) {
      workload.context_lengths.push_back(c);
      contexts += (contexts.empty() ? "" : ", ") + std::to_string(c);
    }
    workload.shapes.push_back(fmt::format(
        "end-to-end: {}; {}; prefill {} tokens; decode {} steps at contexts {}; {} repeats; logits over {} + {} "
        "greedy steps",
        e2e.description, e2e.dtypes_said, o.end_to_end.prefill_tokens, o.end_to_end.decode_tokens, contexts, o.end_to_end.repeats,
        o.end_to_end.correctness_prompt, o.end_to_end.correctness_steps));
    if (!e2e.config_hash.empty()) workload.config_hash = e2e.config_hash;
    if (!e2e.preset.empty()) workload.preset = e2e.preset;
    for (const std::string& d : e2e.dtypes)
      if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) dtypes.push_back(d);
    for (int side = 0; side < 2; ++side) {
      sides[side].records.throughput = e2e.sides[side].throughput;
      for (const EndToEndRow& row : e2e.sides[side].logits) sides[side].records.correctness->end_to_end.push_back(row);
      sides[side].records.model_memory = e2e.sides[side].memory;
    }
  }
  if (o.vae.enabled) {
    const Policy policies[2] = {sides[0].policy, sides[1].policy};
    VaeWorkloadOptions vo = o.vae;
    vo.seed = o.seed;
    const VaeResult vae = run_vae_workload(vo, policies, [&](int side) { accumulate_dispatch(sides[side].dispatched); }, say);
    workload.shapes.push_back("vae: " + vae.description);
    for (int side = 0; side < 2; ++side) {
      sides[side].records.vae_throughput = vae.sides[side].throughput;
      sides[side].records.vae_memory = vae.sides[side].memory;
      sides[side].records.correctness->end_to_end.push_back(vae.sides[side].decode);
      sides[side].records.correctness->end_to_end.push_back(vae.sides[side].round_trip);
    }
  }
  say("probing the machine again");
  const MachineState after = machine_state(o.probe_budget);
  for (Side& s : sides) {
    ScopedPolicy scope(s.policy);
    s.records.manifest = collect_manifest(workload, dtypes);
    s.records.manifest.op_tiers = s.dispatched;
    s.records.manifest.machine_before = before;
    s.records.manifest.machine_after = after;
  }
  return {std::move(sides[0].records), std::move(sides[1].records)};
}

}  // namespace fourfold
