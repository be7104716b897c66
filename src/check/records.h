// The four records of DESIGN.md section 2 (throughput, op time, correctness, memory), the record set of one
// policy, the check result of two, and their JSON form (schema "fourfold.records/1", docs/records_schema.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/error_metrics.h"
#include "check/manifest.h"

namespace fourfold {

inline constexpr std::string_view kRecordsSchema = "fourfold.records/1";

// 2.1 Throughput, end to end. One row per (phase, context): R repeats after warm-up, in tokens/s.
struct ThroughputRow {
  std::string phase;                       // "prefill" (prompt tokens / prefill wall time) or "decode"
  int64_t context_tokens = 0;              // prompt length the figure is stated at
  int64_t generated_tokens = 0;            // decode: tokens generated; prefill: 0
  double median_tokens_per_s = 0, min_tokens_per_s = 0, max_tokens_per_s = 0;
  std::vector<double> samples_tokens_per_s;   // one per repeat, in run order
  bool operator==(const ThroughputRow&) const = default;
};
struct ThroughputRecord {
  int64_t warmup_runs = 0;
  std::vector<ThroughputRow> rows;
  bool operator==(const ThroughputRecord&) const = default;
};

// 2.1 again for the VAE workload: decoded frames per second of a (tiled) decode, R repeats after warm-up.
struct VaeThroughputRow {
  std::string name;                        // what was decoded: "wan2.1-vae-tiny tiled decode"
  int64_t frames = 0, height = 0, width = 0;   // of the decoded video
  int64_t tiles = 1;                       // spatial tiles decoded (1: untiled)
  int64_t pad_calls = 0;                   // constant_pad_nd calls in one decode
  double median_frames_per_s = 0, min_frames_per_s = 0, max_frames_per_s = 0;
  std::vector<double> samples_frames_per_s;   // one per repeat, in run order
  double megapixels_per_s() const { return median_frames_per_s * static_cast<double>(height * width) * 1e-6; }
  bool operator==(const VaeThroughputRow&) const = default;
};
struct VaeThroughputRecord {
  int64_t warmup_runs = 0;
  std::vector<VaeThroughputRow> rows;
  bool operator==(const VaeThroughputRecord&) const = default;
};

// 2.2 Op time: one row per (op, shape, dtype, tier), microseconds per call.
struct OpTimeRow {
  std::string suite;                       // speedups are summarised per suite, never across suites
  std::string op, shape, dtype, tier, variant;
  int64_t warmup_calls = 0;
  int64_t calls_per_sample = 1;            // calls batched into one timed sample when one call is too short
  // Input sets the calls rotated over: more than one keeps each call's inputs out of the caches the previous
  // calls left them in (a decode step reads each weight once, from memory); 1: one set, caches warm ("hot").
  int64_t input_copies = 1;
  double median_us = 0, p10_us = 0, p90_us = 0;
  std::vector<double> samples_us;          // every timed sample, per call
  double bytes = 0;                        // each input read once, each output written once
  double flops = 0;
  double gb_per_s = 0, gflop_per_s = 0;    // at the median
  std::optional<double> roofline_percent;  // of min(bandwidth, FMA) ceiling; nullopt when not probed
  bool operator==(const OpTimeRow&) const = default;
};
// Sets median/p10/p90 from samples_us (check/statistics.h percentiles; NaN for no samples), GB/s and GFLOP/s at
// the median, and the % of the roofline as floor_us / median: floor_us is the time the call would take at the
// ceilings probed in the same run, which op_bench.h's roofline_point computes (the one definition of the
// roofline); nullopt when no probe ran.
void summarize_samples(OpTimeRow& row, std::optional<double> floor_us);

struct OpTimeRecord {
  std::optional<double> peak_read_gb_per_s;   // roofline probes run in the same process
  std::optional<double> peak_gflop_per_s;
  std::vector<OpTimeRow> rows;
  bool operator==(const OpTimeRecord&) const = default;
};

// 2.3 Correctness against the float64 reference on the same inputs.
struct CorrectnessRow {
  std::string op, shape, dtype, tier;
  int64_t count = 0;                       // elements compared
  double max_abs = 0, max_rel = 0, rel_floor = 0;
  int64_t max_ulp = 0;                     // in the output dtype
  double psnr_db = 0;                      // +inf when exact; NaN when NaN appears on one side only
  int64_t nan_mismatches = 0;
  bool exact = false;
  bool operator==(const CorrectnessRow&) const = default;
};
struct EndToEndRow {
  std::string name;                        // "logits", "vae_decode", "vae_round_trip", ...
  double psnr_db = 0;
  std::optional<double> top1_agreement_percent;   // logits only
  std::optional<double> mean_kl;                  // KL(reference || candidate), nats; logits only
  bool operator==(const EndToEndRow&) const = default;
};
CorrectnessRow correctness_row(std::string op, std::string shape, std::string dtype, std::string tier,
                               const ErrorStats& stats);

struct CorrectnessRecord {
  std::vector<CorrectnessRow> ops;
  std::vector<EndToEndRow> end_to_end;
  bool operator==(const CorrectnessRecord&) const = default;
};

// 2.4 Memory: peaks over the workload at three levels, never summed.
struct MemoryRecord {
  std::string process_source = "rss";      // "rss": resident set high-water mark; "device": driver-used memory
  uint64_t allocated_current_bytes = 0, allocated_peak_bytes = 0;
  uint64_t reserved_current_bytes = 0, reserved_peak_bytes = 0;
  uint64_t process_peak_bytes = 0;
  uint64_t process_peak_anon_bytes = 0, process_peak_file_bytes = 0;   // sampled split (PeakSampler)
  bool peak_reset_supported = true;        // false: process peak is the peak since process start
  uint64_t present_before_bytes = 0;       // process level just before the workload
  uint64_t reserved_before_bytes = 0;      // allocator reserved just before it (live tensors the workload inherits)
  // Growth of the reserved bytes never touched (rounding tails no request reached, never resident), from just
  // before the workload to the reserved peak; 0 where the allocator does not know (PyTorch's).
  int64_t reserved_untouched_bytes = 0;
  uint64_t mapped_weights_bytes = 0;       // weights mapped from files, on their own line
  bool operator==(const MemoryRecord&) const = default;
};
// (process peak - present before) - (reserved peak - reserved before) + reserved never touched: what the process
// grew by during the workload that the allocator's own resident growth does not account for. Scratch memory taken
// behind the allocator's back shows up here. Records written before reserved_before_bytes or
// reserved_untouched_bytes existed read them as 0.
int64_t outside_allocator_bytes(const MemoryRecord& m);

// The manifest and the four records of one policy. A record not measured in a run is nullopt.
struct RecordSet {
  Manifest manifest;
  std::optional<ThroughputRecord> throughput;
  std::optional<OpTimeRecord> op_time;
  std::optional<CorrectnessRecord> correctness;
  std::optional<MemoryRecord> memory;
  // 2.4 again for the end-to-end decode workload (the model's prefill and decode): its own peaks, its mapped
  // weights. Absent from records written before the engine existed (the reader accepts both).
  std::optional<MemoryRecord> model_memory;
  // The VAE workload's throughput and its memory over a multi-tile decode (absent in records before it).
  std::optional<VaeThroughputRecord> vae_throughput;
  std::optional<MemoryRecord> vae_memory;
  bool operator==(const RecordSet&) const = default;
};
struct CheckResult {
  RecordSet baseline, candidate;
  bool operator==(const CheckResult&) const = default;
};

std::string to_json_text(const RecordSet& records);
std::string to_json_text(const CheckResult& result);

// Parse and validate; any problem is a FormatError "<source>: field '<path>': expected ..., found ...".
RecordSet parse_record_set(std::string_view text, std::string_view source);
CheckResult parse_check_result(std::string_view text, std::string_view source);
RecordSet read_record_set(const std::string& path);
CheckResult read_check_result(const std::string& path);

// Writes the JSON; refuses (ValueError naming the field) what the reader would refuse, so that a bad record
// is caught where it is made. FormatError when the file cannot be written.
void write_record_set(const std::string& path, const RecordSet& records);
void write_check_result(const std::string& path, const CheckResult& result);

// Writes text to a file, FormatError naming the file when it cannot (shared by the reports).
void write_text_file(const std::string& path, std::string_view text);

}  // namespace fourfold
