// Baseline against candidate, record by record, never blended (DESIGN.md section 2): op time speedups with
// their spread and a noise rule, per-suite geometric means, correctness regressions against the thresholds
// below, memory at each level, throughput ratios.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/records.h"
#include "check/statistics.h"

namespace fourfold {

// Every correctness threshold compare applies, in one place (docs/records_schema.md, "Thresholds").
// A row regresses when any rule fires; the defaults are what `fourfold compare` uses. Beside these, each op
// states its own ULP bound in its case file (OpCases::ulp_bound, check/op_cases/op_case.h).
struct Thresholds {
  double psnr_drop_db = 1.0;         // candidate PSNR < baseline PSNR - this (exact -> inexact always fires)
  // A bfloat16, float16 or fp8 row whose candidate is outside its op's ULP bound regresses when its max ULP
  // also exceeds the baseline's by more than this: a candidate no worse than the baseline never regresses.
  int64_t max_ulp_increase = 0;
  double top1_drop_points = 1.0;     // end to end: top-1 agreement falls by more than this many points
  double mean_kl_increase = 1e-3;    // end to end: mean KL (nats) grows by more than this
  // Always regressions, not thresholds: NaN appearing where the baseline had none (nan_mismatches grows).
};

// Faster / slower only when the repeat-to-repeat spreads do not overlap; otherwise noise.
enum class Verdict { faster, slower, noise };
std::string_view verdict_name(Verdict v);
// [base_lo, base_hi] and [cand_lo, cand_hi] are spreads of a time (lower is better).
Verdict time_verdict(double base_lo, double base_hi, double cand_lo, double cand_hi);

// speedup = baseline median / candidate median; its spread is [base p10 / cand p90, base p90 / cand p10]
// (the slowest and fastest readings of the two p10-p90 intervals). The verdict is noise exactly when that
// spread contains 1, i.e. when the two intervals overlap.
struct OpTimeDelta {
  std::string suite, op, shape, dtype, baseline_tier, candidate_tier;
  double baseline_median_us = 0, candidate_median_us = 0;
  int64_t baseline_copies = 1, candidate_copies = 1;   // input sets rotated over (1: hot caches)
  double speedup = 1, speedup_low = 1, speedup_high = 1;
  Verdict verdict = Verdict::noise;
};
// Geometric means over the rows of one suite: of the speedups and of each spread bound.
struct SuiteSummary {
  std::string suite;
  int64_t rows = 0, faster = 0, slower = 0, noise = 0;
  double geomean = 1, geomean_low = 1, geomean_high = 1;
};

struct OpTimeComparison {
  std::vector<OpTimeDelta> rows;
  std::vector<SuiteSummary> suites;            // in order of first appearance
  std::vector<std::string> only_in_baseline, only_in_candidate;   // "suite/op/shape/dtype"
};

// Tokens/s: ratio = candidate median / baseline median (> 1 is better), spread [cand min / base max,
// cand max / base min]; noise when the min-max intervals overlap.
struct ThroughputDelta {
  std::string phase;
  int64_t context_tokens = 0, generated_tokens = 0;
  double baseline_median = 0, candidate_median = 0;
  double ratio = 1, ratio_low = 1, ratio_high = 1;
  Verdict verdict = Verdict::noise;
};
struct ThroughputComparison {
  std::vector<ThroughputDelta> rows;
  std::vector<std::string> only_in_baseline, only_in_candidate;
};

// Frames/s of the VAE decode, with the same ratio, spread and noise rule as tokens/s.
struct VaeThroughputDelta {
  std::string name;
  int64_t frames = 0, height = 0, width = 0, tiles = 1;
  int64_t baseline_pad_calls = 0, candidate_pad_calls = 0;
  double baseline_median = 0, candidate_median = 0;
  double ratio = 1, ratio_low = 1, ratio_high = 1;
  Verdict verdict = Verdict::noise;
};
struct VaeThroughputComparison {
  std::vector<VaeThroughputDelta> rows;
  std::vector<std::string> only_in_baseline, only_in_candidate;
};

struct CorrectnessDelta {
  std::string op, shape, dtype, baseline_tier, candidate_tier;
  CorrectnessRow baseline, candidate;
  std::optional<int64_t> ulp_bound;           // the op's bound the row was held to; none: float32 or wider, no ULP rule
  std::vector<std::string> regressions;       // one line per rule that fired, each saying what was allowed
};
struct EndToEndDelta {
  std::string name;
  EndToEndRow baseline, candidate;
  std::vector<std::string> regressions;
};
struct CorrectnessComparison {
  std::vector<CorrectnessDelta> ops;
  std::vector<EndToEndDelta> end_to_end;
  std::vector<std::string> only_in_baseline, only_in_candidate;
  int64_t regressions() const;                 // rows with at least one regression
};

// One memory level, baseline and candidate, in bytes (signed: "outside the allocator" can be negative).
struct MemoryLine {
  std::string level;    // "allocator allocated peak", ..., "outside the allocator", "mapped weights"
  int64_t baseline = 0, candidate = 0;
};
struct MemoryComparison {
  std::vector<MemoryLine> levels;             // the three peaks: allocator allocated, allocator reserved, process
  std::vector<MemoryLine> details;            // values at the end, the process peak's split, present before
  MemoryLine outside_allocator;               // on its own line, never summed with the levels
  MemoryLine mapped_weights;
  std::vector<std::string> notes;             // e.g. a peak that could not be reset
};

struct Comparison {
  Manifest baseline_manifest, candidate_manifest;
  std::vector<ManifestDifference> differences;   // printed, not refused
  Thresholds thresholds;
  std::optional<ThroughputComparison> throughput;
  std::optional<OpTimeComparison> op_time;
  std::optional<CorrectnessComparison> correctness;
  std::optional<MemoryComparison> memory;
  std::optional<MemoryComparison> model_memory;   // the end-to-end decode workload's
  std::optional<VaeThroughputComparison> vae_throughput;
  std::optional<MemoryComparison> vae_memory;     // the VAE's multi-tile decode
  std::vector<std::string> notes;                // records measured on one side only
  bool correctness_failed() const { return correctness && correctness->regressions() > 0; }
};

// ValueError naming the first differing workload field when the workloads differ: records of different
// workloads are never compared.
Comparison compare_records(const RecordSet& baseline, const RecordSet& candidate, const Thresholds& thresholds = {});

// Reports of one comparison (report_text.cpp, report_markdown.cpp, report_html.cpp).
std::string render_text(const Comparison& c);       // plain terminal tables
std::string render_markdown(const Comparison& c);
std::string render_html(const Comparison& c);       // one self-contained page, inline SVG, no scripts

}  // namespace fourfold
