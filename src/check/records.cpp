// The records: helpers that fill them, and their JSON writer (schema "fourfold.records/1",
// docs/records_schema.md). The validating reader is records_reader.cpp.
#include "check/records.h"

#include "check/statistics.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "fourfold/errors.h"

namespace fourfold {

using Json = nlohmann::ordered_json;

CorrectnessRow correctness_row(std::string op, std::string shape, std::string dtype, std::string tier,
                               const ErrorStats& s) {
  return {std::move(op), std::move(shape), std::move(dtype), std::move(tier), s.count, s.max_abs, s.max_rel,
          s.rel_floor, s.max_ulp, s.psnr_db, s.nan_mismatches, s.exact};
}

void summarize_samples(OpTimeRow& row, std::optional<double> floor_us) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Summary summary = row.samples_us.empty() ? Summary{0, nan, nan, nan, nan, nan} : summarize(row.samples_us);
  row.median_us = summary.median;
  row.p10_us = summary.p10;
  row.p90_us = summary.p90;
  const double seconds = row.median_us * 1e-6;
  row.gb_per_s = row.bytes / seconds * 1e-9;
  row.gflop_per_s = row.flops / seconds * 1e-9;
  row.roofline_percent.reset();
  if (floor_us) row.roofline_percent = 100.0 * *floor_us / row.median_us;
}

int64_t outside_allocator_bytes(const MemoryRecord& m) {
  const int64_t process_growth = static_cast<int64_t>(m.process_peak_bytes) - static_cast<int64_t>(m.present_before_bytes);
  const int64_t reserved_growth =
      static_cast<int64_t>(m.reserved_peak_bytes) - static_cast<int64_t>(m.reserved_before_bytes);
  return process_growth - reserved_growth + m.reserved_untouched_bytes;
}

namespace {

// JSON has no infinity or NaN; the few fields that may hold them (PSNR, max errors) spell them as strings.
Json real(double v) {
  if (std::isfinite(v)) return v;
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}
Json opt_real(const std::optional<double>& v) { return v ? real(*v) : Json(nullptr); }

Json to_json(const MachineState& s) {
  return {{"read_bandwidth_gb_per_s", opt_real(s.read_bandwidth_gb_per_s)},
          {"thread_latency_ns", opt_real(s.thread_latency_ns)}};
}

Json to_json(const Manifest& m) {
  Json tiers = Json::array();
  for (const OpDispatch& d : m.op_tiers)
    tiers.push_back({{"op", d.op},
                     {"calls", {{"reference", d.reference_calls}, {"generic", d.generic_calls},
                                {"dedicated", d.dedicated_calls}}},
                     {"variant", d.variant}});
  const Workload& w = m.workload;
  return {{"producer", m.producer},
          {"fourfold_version", m.fourfold_version},
          {"git_commit", m.git_commit},
          {"compiler", m.compiler},
          {"cxx_flags", m.cxx_flags},
          {"build_type", m.build_type},
          {"sanitizers", m.sanitizers},
          {"cpu_model", m.cpu_model},
          {"isa_flags", m.isa_flags},
          {"isa_variant", m.isa_variant},
          {"threads", m.threads},
          {"device", m.device},
          {"dtypes", m.dtypes},
          {"policy", m.policy},
          {"op_tiers", tiers},
          {"workload",
           {{"kind", workload_kind_name(w.kind)},
            {"name", w.name},
            {"config_hash", w.config_hash},
            {"preset", w.preset},
            {"seed", w.seed},
            {"shapes", w.shapes},
            {"context_lengths", w.context_lengths},
            {"repeats", w.repeats},
            {"parameters", w.parameters}}},
          {"machine_before", to_json(m.machine_before)},
          {"machine_after", to_json(m.machine_after)}};
}

Json reals(const std::vector<double>& v) {
  Json a = Json::array();
  for (double x : v) a.push_back(real(x));
  return a;
}

Json to_json(const ThroughputRecord& t) {
  Json rows = Json::array();
  for (const ThroughputRow& r : t.rows)
    rows.push_back({{"phase", r.phase},
                    {"context_tokens", r.context_tokens},
                    {"generated_tokens", r.generated_tokens},
                    {"median_tokens_per_s", real(r.median_tokens_per_s)},
                    {"min_tokens_per_s", real(r.min_tokens_per_s)},
                    {"max_tokens_per_s", real(r.max_tokens_per_s)},
                    {"samples_tokens_per_s", reals(r.samples_tokens_per_s)}});
  return {{"warmup_runs", t.warmup_runs}, {"rows", rows}};
}

Json to_json(const VaeThroughputRecord& t) {
  Json rows = Json::array();
  for (const VaeThroughputRow& r : t.rows)
    rows.push_back({{"name", r.name},
                    {"frames", r.frames},
                    {"height", r.height},
                    {"width", r.width},
                    {"tiles", r.tiles},
                    {"pad_calls", r.pad_calls},
                    {"median_frames_per_s", real(r.median_frames_per_s)},
                    {"min_frames_per_s", real(r.min_frames_per_s)},
                    {"max_frames_per_s", real(r.max_frames_per_s)},
                    {"samples_frames_per_s", reals(r.samples_frames_per_s)},
                    {"megapixels_per_s", real(r.megapixels_per_s())}});
  return {{"warmup_runs", t.warmup_runs}, {"rows", rows}};
}

Json to_json(const OpTimeRecord& t) {
  Json rows = Json::array();
  for (const OpTimeRow& r : t.rows)
    rows.push_back({{"suite", r.suite},
                    {"op", r.op},
                    {"shape", r.shape},
                    {"dtype", r.dtype},
                    {"tier", r.tier},
                    {"variant", r.variant},
                    {"warmup_calls", r.warmup_calls},
                    {"calls_per_sample", r.calls_per_sample},
                    {"input_copies", r.input_copies},
                    {"median_us", real(r.median_us)},
                    {"p10_us", real(r.p10_us)},
                    {"p90_us", real(r.p90_us)},
                    {"samples_us", reals(r.samples_us)},
                    {"bytes", real(r.bytes)},
                    {"flops", real(r.flops)},
                    {"gb_per_s", real(r.gb_per_s)},
                    {"gflop_per_s", real(r.gflop_per_s)},
                    {"roofline_percent", opt_real(r.roofline_percent)}});
  return {{"peak_read_gb_per_s", opt_real(t.peak_read_gb_per_s)},
          {"peak_gflop_per_s", opt_real(t.peak_gflop_per_s)},
          {"rows", rows}};
}

Json to_json(const CorrectnessRecord& c) {
  Json ops = Json::array();
  for (const CorrectnessRow& r : c.ops)
    ops.push_back({{"op", r.op},
                   {"shape", r.shape},
                   {"dtype", r.dtype},
                   {"tier", r.tier},
                   {"count", r.count},
                   {"max_abs", real(r.max_abs)},
                   {"max_rel", real(r.max_rel)},
                   {"rel_floor", real(r.rel_floor)},
                   {"max_ulp", r.max_ulp},
                   {"psnr_db", real(r.psnr_db)},
                   {"nan_mismatches", r.nan_mismatches},
                   {"exact", r.exact}});
  Json e2e = Json::array();
  for (const EndToEndRow& r : c.end_to_end)
    e2e.push_back({{"name", r.name},
                   {"psnr_db", real(r.psnr_db)},
                   {"top1_agreement_percent", opt_real(r.top1_agreement_percent)},
                   {"mean_kl", opt_real(r.mean_kl)}});
  return {{"ops", ops}, {"end_to_end", e2e}};
}

Json to_json(const MemoryRecord& m) {
  return {{"process_source", m.process_source},
          {"allocated_current_bytes", m.allocated_current_bytes},
          {"allocated_peak_bytes", m.allocated_peak_bytes},
          {"reserved_current_bytes", m.reserved_current_bytes},
          {"reserved_peak_bytes", m.reserved_peak_bytes},
          {"process_peak_bytes", m.process_peak_bytes},
          {"process_peak_anon_bytes", m.process_peak_anon_bytes},
          {"process_peak_file_bytes", m.process_peak_file_bytes},
          {"peak_reset_supported", m.peak_reset_supported},
          {"present_before_bytes", m.present_before_bytes},
          {"reserved_before_bytes", m.reserved_before_bytes},
          {"reserved_untouched_bytes", m.reserved_untouched_bytes},
          {"mapped_weights_bytes", m.mapped_weights_bytes},
          {"outside_allocator_bytes", outside_allocator_bytes(m)}};
}

template <class T>
Json opt_record(const std::optional<T>& r) {
  return r ? to_json(*r) : Json(nullptr);
}

Json body(const RecordSet& s) {
  return {{"manifest", to_json(s.manifest)},
          {"throughput", opt_record(s.throughput)},
          {"op_time", opt_record(s.op_time)},
          {"correctness", opt_record(s.correctness)},
          {"memory", opt_record(s.memory)},
          {"model_memory", opt_record(s.model_memory)},
          {"vae_throughput", opt_record(s.vae_throughput)},
          {"vae_memory", opt_record(s.vae_memory)}};
}

Json document(std::string_view kind) { return {{"schema", kRecordsSchema}, {"kind", kind}}; }

// The writer's check: read back what was produced, and turn a refusal into an error about the record.
template <class F>
void check_writable(const std::string& text, F&& parse) {
  try {
    parse(text, "record being written");
  } catch (const FormatError& e) {
    throw ValueError(e.what());
  }
}

}  // namespace

std::string to_json_text(const RecordSet& records) {
  Json doc = document("record_set");
  doc.update(body(records));
  return doc.dump(2) + "\n";
}

std::string to_json_text(const CheckResult& result) {
  Json doc = document("check_result");
  doc["baseline"] = body(result.baseline);
  doc["candidate"] = body(result.candidate);
  return doc.dump(2) + "\n";
}

void write_text_file(const std::string& path, std::string_view text) { write_file_atomically(path, text); }

void write_record_set(const std::string& path, const RecordSet& records) {
  const std::string text = to_json_text(records);
  check_writable(text, parse_record_set);
  write_text_file(path, text);
}

void write_check_result(const std::string& path, const CheckResult& result) {
  const std::string text = to_json_text(result);
  check_writable(text, parse_check_result);
  write_text_file(path, text);
}

}  // namespace fourfold
