// Hand-made record sets for the check tests: every record filled, numbers chosen so results are known.
#pragma once

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>

#include <unistd.h>

#include "check/records.h"

namespace fourfold::testing {

inline Workload sample_workload() {
  Workload w;
  w.kind = WorkloadKind::op_suite;
  w.name = "decode-moe";
  w.preset = "tiny";
  w.seed = 42;
  w.shapes = {"1x4096", "8x4096"};
  w.context_lengths = {512, 2048};
  w.repeats = 5;
  return w;
}

inline Manifest sample_manifest(const std::string& policy) {
  Manifest m;
  m.fourfold_version = "0.1.0";
  m.git_commit = "abcdef123456";
  m.compiler = "GNU 12.2.0";
  m.cxx_flags = " -O3 -DNDEBUG";
  m.build_type = "Release";
  m.sanitizers = false;
  m.cpu_model = "Test CPU @ 3.0GHz";
  m.isa_flags = {"avx2", "fma", "f16c"};
  m.isa_variant = "reference";
  m.threads = 8;
  m.device = "cpu";
  m.dtypes = {"float32", "bfloat16"};
  m.policy = policy;
  m.op_tiers = {{"softmax", 10, 0, 0, ""}, {"linear", 0, 4, 6, "avx2"}};
  m.workload = sample_workload();
  m.machine_before = {25.5, 80.0};
  m.machine_after = {24.9, std::nullopt};
  return m;
}

// One op-time row with samples spread evenly over [p10, p90] around the median.
inline OpTimeRow op_row(const std::string& suite, const std::string& op, const std::string& shape, double p10,
                        double median, double p90) {
  OpTimeRow r;
  r.suite = suite;
  r.op = op;
  r.shape = shape;
  r.dtype = "float32";
  r.tier = "reference";
  r.variant = "";
  r.warmup_calls = 3;
  r.calls_per_sample = 4;
  r.median_us = median;
  r.p10_us = p10;
  r.p90_us = p90;
  r.samples_us = {p10, median, p90};
  r.bytes = 1 << 20;
  r.flops = 2e6;
  r.gb_per_s = r.bytes / (median * 1e-6) * 1e-9;
  r.gflop_per_s = r.flops / (median * 1e-6) * 1e-9;
  r.roofline_percent = 12.5;
  return r;
}

inline CorrectnessRow correct_row(const std::string& op, double psnr, int64_t ulp, bool exact) {
  CorrectnessRow r;
  r.op = op;
  r.shape = "8x4096";
  r.dtype = "bfloat16";
  r.tier = "reference";
  r.count = 32768;
  r.max_abs = exact ? 0.0 : 1e-3;
  r.max_rel = exact ? 0.0 : 2e-3;
  r.rel_floor = 1e-3;
  r.max_ulp = ulp;
  r.psnr_db = psnr;
  r.nan_mismatches = 0;
  r.exact = exact;
  return r;
}

inline RecordSet sample_record_set(const std::string& policy = "generic") {
  RecordSet s;
  s.manifest = sample_manifest(policy);
  ThroughputRecord t;
  t.warmup_runs = 1;
  t.rows = {{"prefill", 512, 0, 1000.0, 950.0, 1040.0, {950.0, 1000.0, 1040.0}},
            {"decode", 512, 64, 40.0, 38.0, 41.0, {38.0, 40.0, 41.0}},
            {"decode", 2048, 64, 30.0, 29.0, 31.0, {29.0, 30.0, 31.0}}};
  s.throughput = t;
  OpTimeRecord o;
  o.peak_read_gb_per_s = 40.0;
  o.peak_gflop_per_s = std::nullopt;
  o.rows = {op_row("decode", "linear", "1x4096", 90, 100, 110), op_row("decode", "softmax", "8x4096", 9, 10, 11),
            op_row("prefill", "linear", "8x4096", 900, 1000, 1100)};
  o.rows[1].roofline_percent = std::nullopt;
  s.op_time = o;
  CorrectnessRecord c;
  c.ops = {correct_row("linear", 60.0, 2, false), correct_row("softmax", std::numeric_limits<double>::infinity(), 0, true)};
  c.ops[0].max_abs = std::numeric_limits<double>::infinity();   // an infinity where the reference is finite
  c.end_to_end = {{"logits", 45.0, 99.5, 1e-4}, {"vae_decode", -std::numeric_limits<double>::infinity(), std::nullopt, std::nullopt}};
  s.correctness = c;
  MemoryRecord m;
  m.process_source = "rss";
  m.allocated_current_bytes = 100;
  m.allocated_peak_bytes = 4000;
  m.reserved_current_bytes = 2000;
  m.reserved_peak_bytes = 5000;
  m.process_peak_bytes = 9000;
  m.process_peak_anon_bytes = 7000;
  m.process_peak_file_bytes = 1500;
  m.peak_reset_supported = true;
  m.present_before_bytes = 3000;
  m.mapped_weights_bytes = 1200;
  s.memory = m;
  m.mapped_weights_bytes = 987654;   // the end-to-end decode's record: weights mapped from files
  m.process_peak_file_bytes = 2000;
  s.model_memory = m;
  return s;
}

// A file under the test's temporary directory, removed when the object goes.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name)
      : path((std::filesystem::temp_directory_path() / ("fourfold_check_" + std::to_string(::getpid()) + "_" + name))
                 .string()) {}
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace fourfold::testing
