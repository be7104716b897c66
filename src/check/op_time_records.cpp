#include "check/op_time_records.h"

#include <algorithm>

namespace fourfold {

OpTimeRow op_time_row_header(const BenchCase& c) {
  OpTimeRow row;
  row.suite = c.suite;
  row.op = c.op;
  row.shape = c.name + " " + c.shape;
  row.dtype = std::string(dtype_name(c.dtype));
  return row;
}

OpSuiteWorkload op_suite_workload(const std::vector<BenchCase>& cases, const std::vector<std::string>& suites,
                                  uint64_t seed, int64_t repeats) {
  OpSuiteWorkload w;
  w.workload.kind = WorkloadKind::op_suite;
  w.workload.seed = seed;
  w.workload.repeats = repeats;
  for (size_t i = 0; i < suites.size(); ++i) w.workload.name += (i ? "+" : "") + suites[i];
  for (const BenchCase& c : cases) {
    const std::string d(dtype_name(c.dtype));
    w.workload.shapes.push_back(c.suite + ": " + c.name + " " + c.shape + " " + d);
    if (std::find(w.dtypes.begin(), w.dtypes.end(), d) == w.dtypes.end()) w.dtypes.push_back(d);
  }
  return w;
}

OpTimeRow op_time_row(const BenchRow& r) {
  OpTimeRow row = op_time_row_header(r.bench_case);
  row.tier = r.tier;
  row.variant = r.variant;
  row.warmup_calls = r.timing.warmup;
  row.calls_per_sample = r.timing.calls_per_sample;
  row.input_copies = r.copies;
  row.samples_us = r.timing.sample_us;
  row.bytes = r.cost.bytes();
  row.flops = r.cost.flops;
  summarize_samples(row, r.roof.floor_us > 0 ? std::optional<double>(r.roof.floor_us) : std::nullopt);
  return row;
}

RecordSet op_time_record_set(const std::vector<BenchRow>& rows, const RooflineProbe& probe,
                             const std::vector<std::string>& suites, uint64_t seed, int64_t repeats) {
  RecordSet records;
  records.op_time.emplace();
  records.op_time->peak_read_gb_per_s = probe.read_gbs.median;
  records.op_time->peak_gflop_per_s = probe.fma_gflops.median;
  std::vector<BenchCase> ran;
  for (const BenchRow& r : rows) {
    if (!r.ran()) continue;
    ran.push_back(r.bench_case);
    records.op_time->rows.push_back(op_time_row(r));
  }
  const OpSuiteWorkload w = op_suite_workload(ran, suites, seed, repeats);
  records.manifest = collect_manifest(w.workload, w.dtypes);
  MachineState state;
  state.read_bandwidth_gb_per_s = probe.read_gbs.median;
  if (probe.hop_measured) state.thread_latency_ns = probe.hop_ns.median;
  records.manifest.machine_before = records.manifest.machine_after = state;
  return records;
}

}  // namespace fourfold
