// fourfold bench ops: the op-time record (DESIGN.md section 2.2). Probes the roofline, then times every row of
// the chosen suites through the public op API under the force policy, and prints (and optionally writes) them.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/op_bench.h"
#include "check/op_time_records.h"
#include "check/records.h"
#include "check/statistics.h"
#include "check/suite_rows.h"
#include "commands.h"
#include "core/file_io.h"
#include "core/build_info.h"
#include "fourfold/errors.h"
#include "fourfold/parallel.h"
#include "fourfold/policy.h"

namespace fourfold::cli {
namespace {

struct BenchOpsOptions {
  std::vector<std::string> suites;
  std::string dtype;
  std::string tier;
  std::vector<std::string> force;
  std::string match;
  std::string suites_dir;
  std::string json_path;
  int threads = 0;
  int repeats = 10;
  int warmup = 3;
  double min_sample_ms = 1.0;
  double cap = BenchOptions{}.reference_work_cap;
  uint64_t seed = 0;
  bool quick = false;
  bool no_cap = false;
  bool hot = false;
  bool probes_only = false;
  bool list = false;
  bool small_pages = false;
};

struct SuiteRun {
  Suite suite;
  std::vector<BenchRow> rows;
};

struct BenchRun {
  RooflineProbe probe;
  BenchOptions options;
  std::string policy;
  std::vector<SuiteRun> suites;
};

std::string fmt_us(double us) {
  if (us >= 1e6) return fmt::format("{:.3g} s", us * 1e-6);
  if (us >= 1e4) return fmt::format("{:.0f}", us);
  if (us >= 100) return fmt::format("{:.1f}", us);
  return fmt::format("{:.2f}", us);
}

std::string_view short_dtype(DType d) {
  switch (d) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f8_e4m3fn: return "e4m3fn";
    case DType::f8_e5m2: return "e5m2";
    default: return dtype_name(d);
  }
}

std::string clip(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 1) + "~";
}

void print_header() {
  fmt::print("{:<16} {:<34} {:<40} {:<8} {:<9} {:>24} {:>8} {:>8} {:>6} {:>7}\n", "op", "from", "shape", "dtype",
             "tier", "us/call median (p10-p90)", "GB/s", "GFLOP/s", "roof%", "flt/call");
}

void print_row(const BenchRow& r) {
  const BenchCase& c = r.bench_case;
  const std::string lead = fmt::format("{:<16} {:<34} {:<40} {:<8}", clip(c.op, 16), clip(c.name, 34),
                                       clip(c.shape, 40), short_dtype(c.dtype));
  if (!r.error.empty()) {
    fmt::print("{} ERROR: {}\n", lead, r.error);
    return;
  }
  const OpTiming& t = r.timing;
  const std::string us = fmt::format("{} ({}-{})", fmt_us(t.median_us), fmt_us(t.p10_us), fmt_us(t.p90_us));
  fmt::print("{} {:<9} {:>24} {:>8.2f} {:>8.2f} {:>6.1f} {:>7.2g}\n", lead, r.tier, us, r.roof.gbs, r.roof.gflops,
             100.0 * r.roof.fraction, t.minor_faults_per_call);
}

// The run as a fourfold.records/1 record set (docs/records_schema.md): the op-time record and its manifest.
void write_record_set_of(const BenchRun& run, const BenchOpsOptions& o) {
  std::vector<BenchRow> rows;
  std::vector<std::string> names;
  for (const SuiteRun& s : run.suites) {
    names.push_back(s.suite.name);
    rows.insert(rows.end(), s.rows.begin(), s.rows.end());
  }
  write_record_set(o.json_path, op_time_record_set(rows, run.probe, names, o.seed, o.repeats));
}

std::vector<std::string> requested_suites(const BenchOpsOptions& o, const std::string& dir) {
  std::vector<std::string> names;
  for (const std::string& item : o.suites) {
    std::stringstream ss(item);
    std::string name;
    while (std::getline(ss, name, ',')) {
      if (name.empty()) continue;
      if (name == "all") {
        for (const std::string& n : list_suites(dir)) names.push_back(n);
      } else {
        names.push_back(name);
      }
    }
  }
  if (names.empty()) names = list_suites(dir);
  std::vector<std::string> unique;
  for (const std::string& n : names)
    if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(n);
  return unique;
}

Policy requested_policy(const BenchOpsOptions& o) {
  std::string text = o.tier.empty() ? "" : "all=" + o.tier;
  for (const std::string& f : o.force) text += (text.empty() ? "" : ",") + f;
  return text.empty() ? current_policy() : Policy::parse(text);
}

void run_bench_ops(const BenchOpsOptions& o) {
  apply_threads(o.threads);
  const bool progress = isatty(STDERR_FILENO) != 0 && isatty(STDOUT_FILENO) == 0;
  const std::string dir = o.suites_dir.empty() ? default_suites_dir() : o.suites_dir;

  // Everything that can be a usage error is checked before the probes spend their second.
  const Policy policy = requested_policy(o);
  std::optional<DType> dtype;
  if (!o.dtype.empty()) dtype = parse_dtype(o.dtype);
  if (!o.json_path.empty()) check_output_path(o.json_path, "--json");
  std::vector<Suite> suites;
  if (!o.probes_only)
    for (const std::string& name : requested_suites(o, dir)) suites.push_back(load_suite(name, dir));
  ScopedPolicy scoped(policy);

  BenchRun run;
  run.policy = policy.to_string();
  run.options.seed = o.seed;
  run.options.timer.warmup = o.warmup;
  run.options.timer.samples = o.repeats;
  run.options.timer.min_sample_seconds = o.min_sample_ms * 1e-3;
  run.options.reference_work_cap = o.no_cap ? 0.0 : o.cap;
  run.options.rotate_bytes = o.hot ? 0 : run.options.rotate_bytes;

  if (o.list) {
    // A dry run: what would run, what it costs, and what the reference cap would skip.
    int total = 0, capped = 0;
    nlohmann::ordered_json listed = nlohmann::ordered_json::array();
    for (const Suite& suite : suites)
      for (const BenchCase& c : suite.cases) {
        if (dtype && c.dtype != *dtype) continue;
        if (!o.match.empty() && c.name.find(o.match) == std::string::npos && c.shape.find(o.match) == std::string::npos)
          continue;
        const OpCost cost = op_cost(c);
        const bool skip = run.options.reference_work_cap > 0 && case_work(c) > run.options.reference_work_cap &&
                          expected_tier(c.op) == Tier::reference;
        ++total;
        capped += skip ? 1 : 0;
        listed.push_back(suite_row_json(c));
        fmt::print("{:<14} {:<16} {:<34} {:<40} {:<14} {:>10.3g} B {:>10.3g} flop {:>9.3g} work{}\n", suite.name,
                   clip(c.op, 16), clip(c.name, 34), clip(c.shape, 40), dtype_name(c.dtype), cost.bytes(), cost.flops,
                   case_work(c), skip ? "  (over the reference cap)" : "");
      }
    fmt::print("{} rows, {} over the reference cap\n", total, capped);
    // The rows as fourfold reads the suites: what another producer of records (python/fourfold_torch) reads.
    if (!o.json_path.empty()) {
      std::vector<std::string> names;
      for (const Suite& suite : suites) names.push_back(suite.name);
      write_file_atomically(o.json_path, suite_rows_text(suite_rows_document(names, std::move(listed))));
    }
    return;
  }
  if (progress) fmt::print(stderr, "probing bandwidth, FMA peak and thread latency...\n");
  ProbeBudget budget = o.quick ? ProbeBudget::quick() : ProbeBudget{};
  budget.huge_pages = !o.small_pages;
  run.probe = measure_roofline(budget);
  fmt::print("{}", describe_probe(run.probe));
  if (o.probes_only) {
    if (!o.json_path.empty()) write_record_set_of(run, o);
    return;
  }
  fmt::print("policy: '{}', threads {}, W {} R {}, samples >= {} ms, inputs {}, reference cap {}\n\n",
             run.policy, num_threads(), o.warmup, o.repeats, o.min_sample_ms,
             o.hot ? "hot (one copy)" : fmt::format("rotated over >= {} MiB", run.options.rotate_bytes >> 20),
             run.options.reference_work_cap > 0 ? fmt::format("{:.2g} work", run.options.reference_work_cap) : "none");

  int errors = 0;
  for (Suite& suite : suites) {
    std::vector<BenchCase> cases;
    for (const BenchCase& c : suite.cases) {
      if (dtype && c.dtype != *dtype) continue;
      if (!o.match.empty() && c.name.find(o.match) == std::string::npos && c.shape.find(o.match) == std::string::npos)
        continue;
      cases.push_back(c);
    }
    fmt::print("== {} ({}: {} rows of {} from {} entries) ==\n", suite.name, suite.op, cases.size(),
               suite.cases.size(), suite.entries);
    print_header();
    SuiteRun sr;
    sr.suite = suite;
    std::vector<double> fractions;
    int ran = 0, skipped = 0, failed = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (progress) fmt::print(stderr, "\r[{}/{}] {} {} {}\033[K", i + 1, cases.size(), suite.name, cases[i].name, cases[i].shape);
      BenchRow row = run_bench_case(cases[i], run.probe, run.options);
      if (row.skipped.empty()) print_row(row);   // skipped rows: counted below and listed by --list
      std::fflush(stdout);
      ran += row.ran() ? 1 : 0;
      skipped += row.skipped.empty() ? 0 : 1;
      failed += row.error.empty() ? 0 : 1;
      if (row.ran() && row.roof.fraction > 0) fractions.push_back(row.roof.fraction);
      sr.rows.push_back(std::move(row));
    }
    if (progress) fmt::print(stderr, "\r\033[K");
    errors += failed;
    fmt::print("-- {}: {} ran, {} skipped (reference tier over the cap), {} errors{}\n\n", suite.name, ran, skipped,
               failed, fractions.empty() ? "" : fmt::format("; geometric mean of roofline fractions {:.1f}%",
                                                            100.0 * geometric_mean(fractions)));
    run.suites.push_back(std::move(sr));
  }
  if (!o.json_path.empty()) write_record_set_of(run, o);
  set_exit_code(errors == 0 ? 0 : 1);
}

}  // namespace

void register_bench(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "timing records");
  bench->require_subcommand(1);
  auto* cmd = bench->add_subcommand(
      "ops", "op-time record: roofline probes, then every suite row timed through the op API (DESIGN.md 2.2)");
  static BenchOpsOptions o;
  cmd->add_option("--suite", o.suites, "suite name(s) in data/suites, comma-separated or repeated; 'all' (default)");
  cmd->add_option("--dtype", o.dtype, "only rows of this input dtype (bf16, f32, float8_e4m3fn, ...)");
  cmd->add_option("--tier", o.tier, "force every op to this tier: reference, generic, dedicated");
  cmd->add_option("--force", o.force, "force one op: op=tier (repeatable), e.g. --force softmax=generic");
  cmd->add_option("--repeats", o.repeats, "R timed samples per row")->check(CLI::Range(1, 100000));
  cmd->add_option("--warmup", o.warmup, "W untimed calls per row")->check(CLI::Range(0, 100000));
  cmd->add_option("--min-sample-ms", o.min_sample_ms, "calls are batched until a sample lasts this long")
      ->check(finite_in(0.0, 10000.0));
  cmd->add_option("--json", o.json_path,
                  "also write the op-time record set (fourfold.records/1, readable by compare; with --list: the suite rows listed)");
  cmd->add_option("--match", o.match, "only rows whose source or shape contains this text");
  cmd->add_option("--suites-dir", o.suites_dir, "where the suite files are (default: data/suites of the build)");
  cmd->add_option("--seed", o.seed, "seed of every input");
  cmd->add_option("--cap", o.cap, "skip reference-tier rows above this work (multiply-adds + elements moved)")
      ->check(finite_in(1e-300, 1e300));
  cmd->add_flag("--no-cap", o.no_cap, "run reference-tier rows of any size (float64 loops: hours for all suites)");
  cmd->add_flag("--hot", o.hot, "one input copy: caches stay warm between calls (default: inputs rotate)");
  cmd->add_flag("--quick", o.quick, "quick probes (256 MiB, 3 repeats) and W 1, R 3, 0.5 ms samples");
  cmd->add_flag("--probes-only", o.probes_only, "run the roofline probes and stop");
  cmd->add_flag("--probe-small-pages", o.small_pages, "probe on 4 KiB pages (default: ask for huge pages)");
  cmd->add_flag("--list", o.list, "list the rows with their bytes, flops and work, run nothing");
  add_threads_option(*cmd, o.threads);
  cmd->callback([cmd] {
    BenchOpsOptions run = o;
    if (run.quick) {
      if (cmd->count("--repeats") == 0) run.repeats = 3;
      if (cmd->count("--warmup") == 0) run.warmup = 1;
      if (cmd->count("--min-sample-ms") == 0) run.min_sample_ms = 0.5;
    }
    run_bench_ops(run);
  });
}

}  // namespace fourfold::cli
