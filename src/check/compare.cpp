// Baseline against candidate, record by record: matching rows, ratios with spreads, the noise rule,
// correctness regressions, memory levels.
#include "check/compare.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "check/op_cases/op_case.h"
#include "fourfold/errors.h"

namespace fourfold {
namespace {

std::string psnr_text(double db) {
  if (std::isnan(db)) return "NaN";
  if (std::isinf(db)) return db > 0 ? "inf (exact)" : "-inf";
  return fmt::format("{:.2f} dB", db);
}

// Pairs rows of two lists by key, in baseline order; unmatched rows are listed by key on their side.
template <class Row, class KeyFn, class PairFn>
void match_rows(const std::vector<Row>& base, const std::vector<Row>& cand, KeyFn key, PairFn on_pair,
                std::vector<std::string>& only_base, std::vector<std::string>& only_cand) {
  std::vector<bool> used(cand.size(), false);
  for (const Row& b : base) {
    const std::string k = key(b);
    bool found = false;
    for (size_t i = 0; i < cand.size() && !found; ++i) {
      if (!used[i] && key(cand[i]) == k) {
        used[i] = true;
        found = true;
        on_pair(b, cand[i]);
      }
    }
    if (!found) only_base.push_back(k);
  }
  for (size_t i = 0; i < cand.size(); ++i)
    if (!used[i]) only_cand.push_back(key(cand[i]));
}

OpTimeComparison compare_op_time(const OpTimeRecord& base, const OpTimeRecord& cand) {
  OpTimeComparison out;
  auto key = [](const OpTimeRow& r) { return fmt::format("{}/{}/{}/{}", r.suite, r.op, r.shape, r.dtype); };
  match_rows(base.rows, cand.rows, key, [&](const OpTimeRow& b, const OpTimeRow& c) {
    OpTimeDelta d;
    d.suite = b.suite;
    d.op = b.op;
    d.shape = b.shape;
    d.dtype = b.dtype;
    d.baseline_tier = b.tier;
    d.candidate_tier = c.tier;
    d.baseline_median_us = b.median_us;
    d.candidate_median_us = c.median_us;
    d.baseline_copies = b.input_copies;
    d.candidate_copies = c.input_copies;
    d.speedup = b.median_us / c.median_us;
    d.speedup_low = b.p10_us / c.p90_us;
    d.speedup_high = b.p90_us / c.p10_us;
    d.verdict = time_verdict(b.p10_us, b.p90_us, c.p10_us, c.p90_us);
    out.rows.push_back(d);
  }, out.only_in_baseline, out.only_in_candidate);

  // Per suite, never across suites: their shapes and weights differ, so a product of both means nothing.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const OpTimeDelta*>> by_suite;
  for (const OpTimeDelta& d : out.rows) {
    if (!by_suite.count(d.suite)) order.push_back(d.suite);
    by_suite[d.suite].push_back(&d);
  }
  for (const std::string& suite : order) {
    SuiteSummary s;
    s.suite = suite;
    std::vector<double> mid, low, high;
    for (const OpTimeDelta* d : by_suite[suite]) {
      ++s.rows;
      s.faster += d->verdict == Verdict::faster;
      s.slower += d->verdict == Verdict::slower;
      s.noise += d->verdict == Verdict::noise;
      mid.push_back(d->speedup);
      low.push_back(d->speedup_low);
      high.push_back(d->speedup_high);
    }
    s.geomean = geometric_mean(mid);
    s.geomean_low = geometric_mean(low);
    s.geomean_high = geometric_mean(high);
    out.suites.push_back(s);
  }
  return out;
}

// A rate is the inverse of a time: the candidate is faster when its whole min-max interval lies above.
struct RateRatio {
  double ratio, low, high;
  Verdict verdict;
};
RateRatio rate_ratio(double b_median, double b_min, double b_max, double c_median, double c_min, double c_max) {
  const double low = c_min / b_max, high = c_max / b_min;
  return {c_median / b_median, low, high, low > 1 ? Verdict::faster : high < 1 ? Verdict::slower : Verdict::noise};
}

VaeThroughputComparison compare_vae_throughput(const VaeThroughputRecord& base, const VaeThroughputRecord& cand) {
  VaeThroughputComparison out;
  auto key = [](const VaeThroughputRow& r) {
    return fmt::format("{} {}x{}x{} tiles {}", r.name, r.frames, r.height, r.width, r.tiles);
  };
  match_rows(base.rows, cand.rows, key, [&](const VaeThroughputRow& b, const VaeThroughputRow& c) {
    const RateRatio r = rate_ratio(b.median_frames_per_s, b.min_frames_per_s, b.max_frames_per_s,
                                   c.median_frames_per_s, c.min_frames_per_s, c.max_frames_per_s);
    out.rows.push_back({b.name, b.frames, b.height, b.width, b.tiles, b.pad_calls, c.pad_calls, b.median_frames_per_s,
                        c.median_frames_per_s, r.ratio, r.low, r.high, r.verdict});
  }, out.only_in_baseline, out.only_in_candidate);
  return out;
}

ThroughputComparison compare_throughput(const ThroughputRecord& base, const ThroughputRecord& cand) {
  ThroughputComparison out;
  auto key = [](const ThroughputRow& r) {
    return r.phase == "decode" ? fmt::format("decode@{}+{}", r.context_tokens, r.generated_tokens)
                               : fmt::format("prefill@{}", r.context_tokens);
  };
  match_rows(base.rows, cand.rows, key, [&](const ThroughputRow& b, const ThroughputRow& c) {
    ThroughputDelta d;
    d.phase = b.phase;
    d.context_tokens = b.context_tokens;
    d.generated_tokens = b.generated_tokens;
    d.baseline_median = b.median_tokens_per_s;
    d.candidate_median = c.median_tokens_per_s;
    const RateRatio r = rate_ratio(b.median_tokens_per_s, b.min_tokens_per_s, b.max_tokens_per_s,
                                   c.median_tokens_per_s, c.min_tokens_per_s, c.max_tokens_per_s);
    d.ratio = r.ratio;
    d.ratio_low = r.low;
    d.ratio_high = r.high;
    d.verdict = r.verdict;
    out.rows.push_back(d);
  }, out.only_in_baseline, out.only_in_candidate);
  return out;
}

// PSNR rule shared by per-op and end-to-end rows. A NaN baseline has no PSNR to hold the candidate to.
void check_psnr(double base, double cand, const Thresholds& t, std::vector<std::string>& out) {
  if (std::isnan(base) || std::isnan(cand)) return;   // NaN is judged by the nan_mismatches rule
  if (cand < base - t.psnr_drop_db)
    out.push_back(fmt::format("PSNR {} -> {} (drop > {} dB)", psnr_text(base), psnr_text(cand), t.psnr_drop_db));
}

// The ULP rule's rows: after a long f32 reduction the ULPs of an f32 result near zero count the summation order,
// not an error, so float32 and wider rows are judged by their PSNR (RMS error against the peak) and NaNs alone.
bool judged_in_ulps(const std::string& dtype) {
  return dtype != "float32" && dtype != "float64" && dtype != "complex64" && dtype != "complex128";
}

CorrectnessComparison compare_correctness(const CorrectnessRecord& base, const CorrectnessRecord& cand,
                                          const Thresholds& t) {
  CorrectnessComparison out;
  auto key = [](const CorrectnessRow& r) { return fmt::format("{}/{}/{}", r.op, r.shape, r.dtype); };
  match_rows(base.ops, cand.ops, key, [&](const CorrectnessRow& b, const CorrectnessRow& c) {
    CorrectnessDelta d{b.op, b.shape, b.dtype, b.tier, c.tier, b, c, std::nullopt, {}};
    if (judged_in_ulps(b.dtype)) {
      // Two correct roundings of one f32 value differ by 1 ULP, so exactness is no rule; and a candidate as far
      // out as its baseline says the bound is tight for this row, not that the candidate got worse.
      d.ulp_bound = ulp_bound_of(b.op);
      // As a difference: b.max_ulp + a threshold of 2^63 - 1 would overflow and report a regression that is not one.
      if (c.max_ulp > *d.ulp_bound && c.max_ulp > b.max_ulp && c.max_ulp - b.max_ulp > t.max_ulp_increase) {
        const std::string beyond = t.max_ulp_increase > 0
                                       ? fmt::format("over the baseline by more than {}", t.max_ulp_increase)
                                       : "beyond the baseline";
        d.regressions.push_back(fmt::format("max ULP {} -> {} (outside the op's bound of {} ULP and {})", b.max_ulp,
                                            c.max_ulp, *d.ulp_bound, beyond));
      }
    }
    check_psnr(b.psnr_db, c.psnr_db, t, d.regressions);
    if (c.nan_mismatches > b.nan_mismatches)
      d.regressions.push_back(fmt::format("NaN mismatches {} -> {} (none allowed beyond the baseline's)",
                                          b.nan_mismatches, c.nan_mismatches));
    out.ops.push_back(std::move(d));
  }, out.only_in_baseline, out.only_in_candidate);

  auto e2e_key = [](const EndToEndRow& r) { return r.name; };
  match_rows(base.end_to_end, cand.end_to_end, e2e_key, [&](const EndToEndRow& b, const EndToEndRow& c) {
    EndToEndDelta d{b.name, b, c, {}};
    check_psnr(b.psnr_db, c.psnr_db, t, d.regressions);
    if (b.top1_agreement_percent && c.top1_agreement_percent &&
        *c.top1_agreement_percent < *b.top1_agreement_percent - t.top1_drop_points)
      d.regressions.push_back(fmt::format("top-1 agreement {:.2f}% -> {:.2f}% (drop > {} points)",
                                          *b.top1_agreement_percent, *c.top1_agreement_percent, t.top1_drop_points));
    if (b.mean_kl && c.mean_kl && *c.mean_kl > *b.mean_kl + t.mean_kl_increase)
      d.regressions.push_back(
          fmt::format("mean KL {:.3g} -> {:.3g} (increase > {})", *b.mean_kl, *c.mean_kl, t.mean_kl_increase));
    out.end_to_end.push_back(std::move(d));
  }, out.only_in_baseline, out.only_in_candidate);
  return out;
}

int64_t as_signed(uint64_t v) { return static_cast<int64_t>(v); }

MemoryComparison compare_memory(const MemoryRecord& b, const MemoryRecord& c) {
  MemoryComparison out;
  const std::string process = b.process_source == "device" ? "device used" : "process RSS";
  out.levels = {
      {"allocator allocated peak", as_signed(b.allocated_peak_bytes), as_signed(c.allocated_peak_bytes)},
      {"allocator reserved peak", as_signed(b.reserved_peak_bytes), as_signed(c.reserved_peak_bytes)},
      {process + " peak", as_signed(b.process_peak_bytes), as_signed(c.process_peak_bytes)},
  };
  out.details = {
      {"allocator allocated at end", as_signed(b.allocated_current_bytes), as_signed(c.allocated_current_bytes)},
      {"allocator reserved at end", as_signed(b.reserved_current_bytes), as_signed(c.reserved_current_bytes)},
      {process + " peak, anonymous", as_signed(b.process_peak_anon_bytes), as_signed(c.process_peak_anon_bytes)},
      {process + " peak, file-backed", as_signed(b.process_peak_file_bytes), as_signed(c.process_peak_file_bytes)},
      {"present before the workload", as_signed(b.present_before_bytes), as_signed(c.present_before_bytes)},
      {"allocator reserved before the workload", as_signed(b.reserved_before_bytes), as_signed(c.reserved_before_bytes)},
      {"allocator reserved never touched", b.reserved_untouched_bytes, c.reserved_untouched_bytes},
  };
  out.outside_allocator = {"outside the allocator", outside_allocator_bytes(b), outside_allocator_bytes(c)};
  out.mapped_weights = {"mapped weights", as_signed(b.mapped_weights_bytes), as_signed(c.mapped_weights_bytes)};
  if (b.process_source != c.process_source)
    out.notes.push_back(fmt::format("process level differs: baseline '{}', candidate '{}'", b.process_source,
                                    c.process_source));
  if (!b.peak_reset_supported) out.notes.push_back("baseline: the kernel's process peak could not be reset (a sampled maximum, or since process start)");
  if (!c.peak_reset_supported) out.notes.push_back("candidate: the kernel's process peak could not be reset (a sampled maximum, or since process start)");
  return out;
}

template <class T>
void note_one_sided(const char* record, const std::optional<T>& b, const std::optional<T>& c,
                    std::vector<std::string>& notes) {
  if (b && !c) notes.push_back(fmt::format("{}: measured in the baseline only", record));
  if (!b && c) notes.push_back(fmt::format("{}: measured in the candidate only", record));
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::noise: return "noise";
  }
  return "?";
}

Verdict time_verdict(double base_lo, double base_hi, double cand_lo, double cand_hi) {
  if (cand_hi < base_lo) return Verdict::faster;
  if (cand_lo > base_hi) return Verdict::slower;
  return Verdict::noise;   // the intervals overlap: the difference is inside the repeat-to-repeat spread
}

int64_t CorrectnessComparison::regressions() const {
  int64_t n = 0;
  for (const auto& d : ops) n += !d.regressions.empty();
  for (const auto& d : end_to_end) n += !d.regressions.empty();
  return n;
}

Comparison compare_records(const RecordSet& baseline, const RecordSet& candidate, const Thresholds& thresholds) {
  const WorkloadMatch match = workload_equal(baseline.manifest.workload, candidate.manifest.workload);
  if (!match)
    throw ValueError(fmt::format("compare: the records are of different workloads: field '{}' is {} in the baseline "
                                 "and {} in the candidate; records compare only on equal workloads",
                                 match.field, match.baseline, match.candidate));
  Comparison c;
  c.baseline_manifest = baseline.manifest;
  c.candidate_manifest = candidate.manifest;
  c.differences = manifest_differences(baseline.manifest, candidate.manifest);
  c.thresholds = thresholds;
  if (baseline.throughput && candidate.throughput)
    c.throughput = compare_throughput(*baseline.throughput, *candidate.throughput);
  if (baseline.op_time && candidate.op_time) c.op_time = compare_op_time(*baseline.op_time, *candidate.op_time);
  if (baseline.correctness && candidate.correctness)
    c.correctness = compare_correctness(*baseline.correctness, *candidate.correctness, thresholds);
  if (baseline.memory && candidate.memory) c.memory = compare_memory(*baseline.memory, *candidate.memory);
  if (baseline.model_memory && candidate.model_memory)
    c.model_memory = compare_memory(*baseline.model_memory, *candidate.model_memory);
  note_one_sided("throughput", baseline.throughput, candidate.throughput, c.notes);
  note_one_sided("op time", baseline.op_time, candidate.op_time, c.notes);
  note_one_sided("correctness", baseline.correctness, candidate.correctness, c.notes);
  note_one_sided("memory", baseline.memory, candidate.memory, c.notes);
  if (baseline.vae_throughput && candidate.vae_throughput)
    c.vae_throughput = compare_vae_throughput(*baseline.vae_throughput, *candidate.vae_throughput);
  if (baseline.vae_memory && candidate.vae_memory) c.vae_memory = compare_memory(*baseline.vae_memory, *candidate.vae_memory);
  note_one_sided("model memory", baseline.model_memory, candidate.model_memory, c.notes);
  note_one_sided("VAE throughput", baseline.vae_throughput, candidate.vae_throughput, c.notes);
  note_one_sided("VAE memory", baseline.vae_memory, candidate.vae_memory, c.notes);
  return c;
}

}  // namespace fourfold
