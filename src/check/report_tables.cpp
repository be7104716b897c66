// The sections of a comparison report: header, differences, then each record on its own, never blended.
#include "check/report_tables.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check/op_cases/op_case.h"

namespace fourfold::report {
namespace {

std::string opt_text(const std::optional<double>& v, const char* fmt_spec_unit) {
  return v ? fmt::format(fmt::runtime(fmt_spec_unit), *v) : std::string("not measured");
}

// The producer first: a fourfold build (and its force policy) or another producer such as a PyTorch build.
std::string manifest_line(const Manifest& m) {
  const std::string producer = m.producer.empty() ? fmt::format("fourfold {} ({})", m.fourfold_version, m.git_commit)
                                                  : m.producer;
  const std::string policy = m.producer.empty() || !m.policy.empty() ? fmt::format(", policy '{}'", m.policy) : "";
  return fmt::format("{}, {}{}, {}, {} threads, device {}, isa {}{}, dtypes {}", producer, m.build_type,
                     m.sanitizers ? " +sanitizers" : "", m.compiler, m.threads, m.device, m.isa_variant, policy,
                     fmt::join(m.dtypes, ","));
}

std::string workload_line(const Workload& w) {
  std::string line = fmt::format("{} '{}'", workload_kind_name(w.kind), w.name);
  if (!w.config_hash.empty()) line += fmt::format(", config {}", w.config_hash);
  if (!w.preset.empty()) line += fmt::format(", preset '{}'", w.preset);
  line += fmt::format(", seed {}, {} shapes, repeats {}", w.seed, w.shapes.size(), w.repeats);
  if (!w.context_lengths.empty()) line += fmt::format(", contexts {}", fmt::join(w.context_lengths, "/"));
  return line;
}

std::string machine_text(const MachineState& before, const MachineState& after) {
  return fmt::format("read bandwidth {} -> {}, thread latency {} -> {}",
                     opt_text(before.read_bandwidth_gb_per_s, "{:.1f} GB/s"),
                     opt_text(after.read_bandwidth_gb_per_s, "{:.1f} GB/s"),
                     opt_text(before.thread_latency_ns, "{:.0f} ns"), opt_text(after.thread_latency_ns, "{:.0f} ns"));
}

std::string spread_text(double lo, double hi) { return fmt::format("[{:.2f}, {:.2f}]", lo, hi); }

std::string tier_text(const std::string& a, const std::string& b) { return a == b ? a : fmt::format("{} -> {}", a, b); }

Block paragraph(std::string text) { return Block{std::move(text), {}}; }

void add_unmatched(Section& s, const std::vector<std::string>& only_base, const std::vector<std::string>& only_cand) {
  if (!only_base.empty())
    s.blocks.push_back(paragraph(fmt::format("in the baseline only: {}", fmt::join(only_base, ", "))));
  if (!only_cand.empty())
    s.blocks.push_back(paragraph(fmt::format("in the candidate only: {}", fmt::join(only_cand, ", "))));
}

Section header_section(const Comparison& c) {
  Section s{SectionKind::header, "fourfold compare", {}};
  s.blocks.push_back(paragraph("workload: " + workload_line(c.baseline_manifest.workload)));
  s.blocks.push_back(paragraph("baseline: " + manifest_line(c.baseline_manifest)));
  s.blocks.push_back(paragraph("candidate: " + manifest_line(c.candidate_manifest)));
  s.blocks.push_back(paragraph("machine state, baseline (opaque probe numbers, before -> after the workload): " +
                               machine_text(c.baseline_manifest.machine_before, c.baseline_manifest.machine_after)));
  s.blocks.push_back(paragraph("machine state, candidate: " +
                               machine_text(c.candidate_manifest.machine_before, c.candidate_manifest.machine_after)));
  if (c.differences.empty()) {
    s.blocks.push_back(paragraph("build, machine, threads and dispatch: identical"));
  } else {
    Table t{{"differs (printed, not refused)", "baseline", "candidate"}, {false, false, false}, {}, {}};
    // A whole compiler command line (a PyTorch build's CXX_FLAGS) would make the table pages wide: the
    // report shows its start, the records keep all of it.
    const auto clipped = [](const std::string& v) { return v.size() > 96 ? v.substr(0, 93) + "..." : v; };
    for (const ManifestDifference& d : c.differences) {
      t.rows.push_back({d.field, clipped(d.baseline), clipped(d.candidate)});
      t.flagged.push_back(false);
    }
    s.blocks.push_back(Block{"", t});
  }
  for (const std::string& n : c.notes) s.blocks.push_back(paragraph(n));
  return s;
}

Section throughput_section(const ThroughputComparison& t) {
  Section s{SectionKind::throughput, "Throughput (tokens/s)", {}};
  s.blocks.push_back(paragraph(
      "ratio = candidate median / baseline median (> 1 is better); spread = [candidate min / baseline max, "
      "candidate max / baseline min]; noise when the min-max intervals overlap."));
  Table table{{"phase", "context", "generated", "baseline", "candidate", "ratio", "spread", "verdict"},
              {false, true, true, true, true, true, true, false}, {}, {}};
  for (const ThroughputDelta& d : t.rows) {
    table.rows.push_back({d.phase, fmt::format("{}", d.context_tokens), fmt::format("{}", d.generated_tokens),
                          fmt::format("{:.1f}", d.baseline_median), fmt::format("{:.1f}", d.candidate_median),
                          ratio_text(d.ratio), spread_text(d.ratio_low, d.ratio_high),
                          std::string(verdict_name(d.verdict))});
    table.flagged.push_back(d.verdict == Verdict::slower);
  }
  s.blocks.push_back(Block{"", table});
  add_unmatched(s, t.only_in_baseline, t.only_in_candidate);
  return s;
}

Section vae_throughput_section(const VaeThroughputComparison& t) {
  Section s{SectionKind::throughput, "VAE decode (frames/s)", {}};
  s.blocks.push_back(paragraph("ratio = candidate median / baseline median (> 1 is better), spread and noise as for "
                               "tokens/s; pad calls = constant_pad_nd calls in one decode."));
  Table table{{"decode", "frames", "size", "tiles", "pad calls", "baseline", "candidate", "ratio", "spread", "verdict"},
              {false, true, false, true, false, true, true, true, true, false}, {}, {}};
  for (const VaeThroughputDelta& d : t.rows) {
    table.rows.push_back({d.name, fmt::format("{}", d.frames), fmt::format("{}x{}", d.width, d.height),
                          fmt::format("{}", d.tiles),
                          d.baseline_pad_calls == d.candidate_pad_calls
                              ? fmt::format("{}", d.baseline_pad_calls)
                              : fmt::format("{} -> {}", d.baseline_pad_calls, d.candidate_pad_calls),
                          fmt::format("{:.3f}", d.baseline_median), fmt::format("{:.3f}", d.candidate_median),
                          ratio_text(d.ratio), spread_text(d.ratio_low, d.ratio_high), std::string(verdict_name(d.verdict))});
    table.flagged.push_back(d.verdict == Verdict::slower);
  }
  s.blocks.push_back(Block{"", table});
  add_unmatched(s, t.only_in_baseline, t.only_in_candidate);
  return s;
}

// Where each call found its inputs: "memory (N sets)" when they rotated past the caches, "hot" for one set.
std::string inputs_text(int64_t baseline, int64_t candidate) {
  const auto one = [](int64_t copies) { return copies > 1 ? fmt::format("memory ({} sets)", copies) : std::string("hot"); };
  return baseline == candidate ? one(baseline) : one(baseline) + " / " + one(candidate);
}

Section op_time_section(const OpTimeComparison& t) {
  Section s{SectionKind::op_time, "Op time (µs per call)", {}};
  s.blocks.push_back(paragraph(
      "speedup = baseline median / candidate median; spread = [baseline p10 / candidate p90, baseline p90 / "
      "candidate p10]; noise = the two p10-p90 intervals overlap (the spread contains 1), not a change. inputs: "
      "memory = the calls rotated over input sets past the caches (as a decode step reads its weights), hot = one "
      "set, kept in the caches between calls (--hot)."));
  Table table{{"suite", "op", "shape", "dtype", "tier", "inputs", "baseline µs", "candidate µs", "speedup", "spread", "verdict"},
              {false, false, false, false, false, false, true, true, true, true, false}, {}, {}};
  for (const OpTimeDelta& d : t.rows) {
    table.rows.push_back({d.suite, d.op, d.shape, d.dtype, tier_text(d.baseline_tier, d.candidate_tier),
                          inputs_text(d.baseline_copies, d.candidate_copies), fmt::format("{:.3f}", d.baseline_median_us), fmt::format("{:.3f}", d.candidate_median_us),
                          ratio_text(d.speedup), spread_text(d.speedup_low, d.speedup_high),
                          std::string(verdict_name(d.verdict))});
    table.flagged.push_back(d.verdict == Verdict::slower);
  }
  s.blocks.push_back(Block{"", table});
  Table suites{{"suite", "rows", "geomean speedup", "geomean of spread bounds", "faster", "slower", "noise"},
               {false, true, true, true, true, true, true}, {}, {}};
  for (const SuiteSummary& g : t.suites) {
    suites.rows.push_back({g.suite, fmt::format("{}", g.rows), ratio_text(g.geomean),
                           spread_text(g.geomean_low, g.geomean_high), fmt::format("{}", g.faster),
                           fmt::format("{}", g.slower), fmt::format("{}", g.noise)});
    suites.flagged.push_back(false);
  }
  s.blocks.push_back(Block{"Per suite (geometric mean of per-shape speedups; never across suites):", suites});
  add_unmatched(s, t.only_in_baseline, t.only_in_candidate);
  return s;
}

Section correctness_section(const CorrectnessComparison& t, const Thresholds& th) {
  Section s{SectionKind::correctness, "Correctness (against the float64 reference)", {}};
  s.blocks.push_back(paragraph(fmt::format(
      "a row regresses when: its candidate's max ULP is outside the op's ULP bound (bfloat16, float16 and fp8 rows; "
      "each op states its bound in src/check/op_cases/, default {} ULP) and above the baseline's{}; PSNR drops by "
      "more than {} dB; NaN mismatches grow; end to end, top-1 agreement drops by more than {} percentage points or "
      "mean KL grows by more than {}. float32 and wider rows have no ULP bound (-): PSNR and NaNs judge them. "
      "Exactness alone is never a regression.",
      kDefaultUlpBound, th.max_ulp_increase > 0 ? fmt::format(" by more than {}", th.max_ulp_increase) : "",
      th.psnr_drop_db, th.top1_drop_points, th.mean_kl_increase)));
  Table table{{"op", "shape", "dtype", "tier", "PSNR dB", "max ULP", "ULP bound", "max abs", "max rel", "exact", "result"},
              {false, false, false, false, true, true, true, true, true, false, false}, {}, {}};
  for (const CorrectnessDelta& d : t.ops) {
    const auto& b = d.baseline;
    const auto& c = d.candidate;
    table.rows.push_back({d.op, d.shape, d.dtype, tier_text(d.baseline_tier, d.candidate_tier),
                          fmt::format("{} -> {}", psnr_text(b.psnr_db), psnr_text(c.psnr_db)),
                          fmt::format("{} -> {}", b.max_ulp, c.max_ulp),
                          d.ulp_bound ? fmt::format("{}", *d.ulp_bound) : std::string("-"),
                          fmt::format("{:.3g} -> {:.3g}", b.max_abs, c.max_abs),
                          fmt::format("{:.3g} -> {:.3g}", b.max_rel, c.max_rel),
                          fmt::format("{} -> {}", b.exact ? "yes" : "no", c.exact ? "yes" : "no"),
                          d.regressions.empty() ? "ok" : fmt::format("REGRESSION: {}", fmt::join(d.regressions, "; "))});
    table.flagged.push_back(!d.regressions.empty());
  }
  s.blocks.push_back(Block{"", table});
  if (!t.end_to_end.empty()) {
    Table e2e{{"end to end", "PSNR dB", "top-1 agreement %", "mean KL", "result"},
              {false, true, true, true, false}, {}, {}};
    auto opt = [](const std::optional<double>& v, const char* spec) {
      return v ? fmt::format(fmt::runtime(spec), *v) : std::string("-");
    };
    for (const EndToEndDelta& d : t.end_to_end) {
      e2e.rows.push_back({d.name, fmt::format("{} -> {}", psnr_text(d.baseline.psnr_db), psnr_text(d.candidate.psnr_db)),
                          fmt::format("{} -> {}", opt(d.baseline.top1_agreement_percent, "{:.2f}"),
                                      opt(d.candidate.top1_agreement_percent, "{:.2f}")),
                          fmt::format("{} -> {}", opt(d.baseline.mean_kl, "{:.3g}"), opt(d.candidate.mean_kl, "{:.3g}")),
                          d.regressions.empty() ? "ok" : fmt::format("REGRESSION: {}", fmt::join(d.regressions, "; "))});
      e2e.flagged.push_back(!d.regressions.empty());
    }
    s.blocks.push_back(Block{"", e2e});
  }
  add_unmatched(s, t.only_in_baseline, t.only_in_candidate);
  return s;
}

Section memory_section(const MemoryComparison& m,
                       const std::string& title = "Memory (peaks over the workload; the levels are never summed)") {
  Section s{SectionKind::memory, title, {}};
  Table table{{"level", "baseline", "candidate", "change"}, {false, true, true, true}, {}, {}};
  auto add = [&](Table& t, const MemoryLine& l) {
    t.rows.push_back({l.level, bytes_text(l.baseline), bytes_text(l.candidate), change_text(l.baseline, l.candidate)});
    t.flagged.push_back(false);
  };
  for (const MemoryLine& l : m.levels) add(table, l);
  s.blocks.push_back(Block{"", table});
  Table details{{"detail", "baseline", "candidate", "change"}, {false, true, true, true}, {}, {}};
  for (const MemoryLine& l : m.details) add(details, l);
  s.blocks.push_back(Block{"", details});
  Table outside{{"on its own line", "baseline", "candidate", "change"}, {false, true, true, true}, {}, {}};
  add(outside, m.outside_allocator);
  add(outside, m.mapped_weights);
  s.blocks.push_back(Block{"outside the allocator = (process peak - present before the workload) - (allocator "
                           "reserved peak - reserved before it) + reserved never touched (the blocks' rounding "
                           "tails that no request reached, never resident): the process's own growth that the "
                           "allocator's resident growth does not explain; near zero when nothing allocates "
                           "behind the allocator's back:",
                           outside});
  for (const std::string& n : m.notes) s.blocks.push_back(paragraph(n));
  return s;
}

}  // namespace

std::string bytes_text(int64_t bytes) {
  const double v = static_cast<double>(bytes);
  const double a = std::fabs(v);
  if (a >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", v / (1024.0 * 1024 * 1024));
  if (a >= 1024.0 * 1024) return fmt::format("{:.2f} MiB", v / (1024.0 * 1024));
  if (a >= 1024.0) return fmt::format("{:.2f} KiB", v / 1024.0);
  return fmt::format("{} B", bytes);
}

std::string change_text(int64_t baseline, int64_t candidate) {
  if (baseline == candidate) return "no change";
  const int64_t d = candidate - baseline;
  std::string text = fmt::format("{}{}", d > 0 ? "+" : "", bytes_text(d));
  if (baseline > 0) text += fmt::format(" ({:+.1f}%)", 100.0 * static_cast<double>(d) / static_cast<double>(baseline));
  return text;
}

std::string ratio_text(double r) { return fmt::format("{:.3f}x", r); }

std::string psnr_text(double db) {
  if (std::isnan(db)) return "NaN";
  if (std::isinf(db)) return db > 0 ? "inf" : "-inf";
  return fmt::format("{:.2f}", db);
}

std::vector<Section> build_sections(const Comparison& c) {
  std::vector<Section> out{header_section(c)};
  if (c.throughput) out.push_back(throughput_section(*c.throughput));
  if (c.op_time) out.push_back(op_time_section(*c.op_time));
  if (c.correctness) out.push_back(correctness_section(*c.correctness, c.thresholds));
  if (c.memory) out.push_back(memory_section(*c.memory));
  if (c.model_memory)
    out.push_back(memory_section(*c.model_memory, "Memory of the end-to-end decode (prefill and decode of the model)"));
  if (c.vae_throughput) out.push_back(vae_throughput_section(*c.vae_throughput));
  if (c.vae_memory) out.push_back(memory_section(*c.vae_memory, "Memory of the VAE's tiled decode"));
  return out;
}

std::string verdict_line(const Comparison& c) {
  if (!c.correctness) return "correctness: not compared (not measured on both sides)";
  const int64_t n = c.correctness->regressions();
  return n == 0 ? "correctness: no regression against the thresholds"
                : fmt::format("correctness: {} row(s) regressed against the thresholds", n);
}

}  // namespace fourfold::report
