// The validating reader of the records: every value is checked for type, range and consistency, and every
// refusal is a FormatError naming the file and the field's path (docs/records_schema.md).
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/records.h"
#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/formats/bounded_json.h"
#include "model/formats/checked_json.h"

namespace fourfold {
namespace {

using Json = nlohmann::ordered_json;


enum class Num {
  positive,          // > 0, finite: times, rates
  non_negative,      // >= 0, finite: bytes, flops, floors
  non_negative_inf,  // >= 0 or +inf: max errors (an infinity where the reference is finite)
  finite,            // any finite number
  percent,           // [0, 100]
  any,               // finite, "inf", "-inf" or "nan": PSNR
};

std::string_view expected_text(Num rule) {
  switch (rule) {
    case Num::positive: return "a positive finite number";
    case Num::non_negative: return "a finite number >= 0";
    case Num::non_negative_inf: return "a number >= 0 or \"inf\"";
    case Num::finite: return "a finite number";
    case Num::percent: return "a number in [0, 100]";
    case Num::any: return "a number, \"inf\", \"-inf\" or \"nan\"";
  }
  return "a number";
}

bool allowed(Num rule, double v) {
  switch (rule) {
    case Num::positive: return std::isfinite(v) && v > 0;
    case Num::non_negative: return std::isfinite(v) && v >= 0;
    case Num::non_negative_inf: return !std::isnan(v) && v >= 0;
    case Num::finite: return std::isfinite(v);
    case Num::percent: return std::isfinite(v) && v >= 0 && v <= 100;
    case Num::any: return true;
  }
  return false;
}

std::string describe(const Json& j) { return CheckedJson::describe(j); }

// A value inside the document with its path ("op_time.rows[3].median_us"), so every refusal names it.
class Node {
 public:
  Node(const Json& j, std::string path, std::string_view source) : j_(&j), path_(std::move(path)), source_(source) {}

  [[noreturn]] void fail(std::string_view expected, std::string_view found) const {
    fail_field<FormatError>(source_, path_.empty() ? "(document)" : path_, expected, found);
  }
  [[noreturn]] void fail(std::string_view expected) const { fail(expected, describe(*j_)); }

  const std::string& path() const { return path_; }
  bool is_null() const { return j_->is_null(); }
  bool has(const char* key) const { return j_->is_object() && j_->contains(key); }

  Node operator[](const char* key) const {
    if (!j_->is_object()) fail("an object");
    const std::string child = path_.empty() ? key : path_ + "." + key;
    auto it = j_->find(key);
    if (it == j_->end()) Node(*j_, child, source_).fail("a value", "no such field");
    return Node(*it, child, source_);
  }

  template <class F>
  void each(F&& f) const {
    if (!j_->is_array()) fail("an array");
    for (size_t i = 0; i < j_->size(); ++i) f(Node((*j_)[i], fmt::format("{}[{}]", path_, i), source_));
  }
  template <class T, class F>
  std::vector<T> list(F&& f) const {
    std::vector<T> out;
    each([&](const Node& n) { out.push_back(f(n)); });
    return out;
  }

  std::string str() const {
    if (!j_->is_string()) fail("a string");
    return j_->get<std::string>();
  }
  std::string one_of(std::initializer_list<std::string_view> names) const {
    std::string s = str();
    for (std::string_view n : names)
      if (s == n) return s;
    std::string expected = "one of";
    for (std::string_view n : names) expected += fmt::format(" \"{}\"", n);
    fail(expected);
  }
  bool boolean() const {
    if (!j_->is_boolean()) fail("true or false");
    return j_->get<bool>();
  }
  int64_t integer(int64_t min = std::numeric_limits<int64_t>::min()) const {
    const bool fits = j_->is_number_integer() &&
                      (!j_->is_number_unsigned() || j_->get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()));
    if (!fits || j_->get<int64_t>() < min)
      fail(min == 0 ? "an integer >= 0" : min == 1 ? "an integer >= 1" : "an integer");
    return j_->get<int64_t>();
  }
  uint64_t unsigned_integer() const {
    if (!j_->is_number_unsigned()) fail("an integer >= 0");
    return j_->get<uint64_t>();
  }
  double real(Num rule) const {
    double v = 0;
    if (j_->is_number()) {
      v = j_->get<double>();
    } else if (j_->is_string() && j_->get<std::string>() == "inf") {
      v = std::numeric_limits<double>::infinity();
    } else if (j_->is_string() && j_->get<std::string>() == "-inf") {
      v = -std::numeric_limits<double>::infinity();
    } else if (j_->is_string() && j_->get<std::string>() == "nan") {
      v = std::numeric_limits<double>::quiet_NaN();
    } else {
      fail(expected_text(rule));
    }
    if (!allowed(rule, v)) fail(expected_text(rule));
    return v;
  }
  std::optional<double> optional_real(Num rule) const {
    if (j_->is_null()) return std::nullopt;
    return real(rule);
  }
  std::vector<std::string> strings() const {
    return list<std::string>([](const Node& n) { return n.str(); });
  }

 private:
  const Json* j_;
  std::string path_;
  std::string_view source_;
};

MachineState read_machine(const Node& n) {
  MachineState s;
  s.read_bandwidth_gb_per_s = n["read_bandwidth_gb_per_s"].optional_real(Num::positive);
  s.thread_latency_ns = n["thread_latency_ns"].optional_real(Num::positive);
  return s;
}

Workload read_workload(const Node& n) {
  Workload w;
  const Node kind = n["kind"];
  const auto k = parse_workload_kind(kind.str());
  if (!k) kind.fail("one of \"op_suite\" \"model\" \"preset\" \"memory\"");
  w.kind = *k;
  w.name = n["name"].str();
  w.config_hash = n["config_hash"].str();
  w.preset = n["preset"].str();
  w.seed = n["seed"].unsigned_integer();
  w.shapes = n["shapes"].strings();
  w.context_lengths = n["context_lengths"].list<int64_t>([](const Node& c) { return c.integer(1); });
  w.repeats = n["repeats"].integer(1);
  if (n.has("parameters")) w.parameters = n["parameters"].strings();   // absent in records before it existed
  return w;
}

Manifest read_manifest(const Node& n) {
  Manifest m;
  if (n.has("producer")) m.producer = n["producer"].str();   // absent in records written before other producers
  m.fourfold_version = n["fourfold_version"].str();
  m.git_commit = n["git_commit"].str();
  m.compiler = n["compiler"].str();
  m.cxx_flags = n["cxx_flags"].str();
  m.build_type = n["build_type"].str();
  m.sanitizers = n["sanitizers"].boolean();
  m.cpu_model = n["cpu_model"].str();
  m.isa_flags = n["isa_flags"].strings();
  m.isa_variant = n["isa_variant"].str();
  m.threads = n["threads"].integer(1);
  m.device = n["device"].str();
  m.dtypes = n["dtypes"].strings();
  m.policy = n["policy"].str();
  m.op_tiers = n["op_tiers"].list<OpDispatch>([](const Node& d) {
    const Node calls = d["calls"];
    return OpDispatch{d["op"].str(), calls["reference"].unsigned_integer(), calls["generic"].unsigned_integer(),
                      calls["dedicated"].unsigned_integer(), d["variant"].str()};
  });
  m.workload = read_workload(n["workload"]);
  m.machine_before = read_machine(n["machine_before"]);
  m.machine_after = read_machine(n["machine_after"]);
  return m;
}

// Hand-edited files can hold values that are each valid but contradict each other; say which one.
void require_order(const Node& n, double lo, double mid, double hi, std::string_view what) {
  if (!(lo <= mid && mid <= hi)) n.fail(what, fmt::format("{} <= {} <= {} false", lo, mid, hi));
}

ThroughputRecord read_throughput(const Node& n) {
  ThroughputRecord t;
  t.warmup_runs = n["warmup_runs"].integer(0);
  t.rows = n["rows"].list<ThroughputRow>([](const Node& r) {
    ThroughputRow row;
    row.phase = r["phase"].one_of({"prefill", "decode"});
    row.context_tokens = r["context_tokens"].integer(1);
    row.generated_tokens = r["generated_tokens"].integer(0);
    if (row.phase == "decode" && row.generated_tokens < 1)
      r["generated_tokens"].fail("an integer >= 1 for a decode row");
    row.median_tokens_per_s = r["median_tokens_per_s"].real(Num::positive);
    row.min_tokens_per_s = r["min_tokens_per_s"].real(Num::positive);
    row.max_tokens_per_s = r["max_tokens_per_s"].real(Num::positive);
    row.samples_tokens_per_s = r["samples_tokens_per_s"].list<double>([](const Node& s) { return s.real(Num::positive); });
    require_order(r["median_tokens_per_s"], row.min_tokens_per_s, row.median_tokens_per_s, row.max_tokens_per_s,
                  "min_tokens_per_s <= median_tokens_per_s <= max_tokens_per_s");
    return row;
  });
  return t;
}

VaeThroughputRecord read_vae_throughput(const Node& n) {
  VaeThroughputRecord t;
  t.warmup_runs = n["warmup_runs"].integer(0);
  t.rows = n["rows"].list<VaeThroughputRow>([](const Node& r) {
    VaeThroughputRow row;
    row.name = r["name"].str();
    row.frames = r["frames"].integer(1);
    row.height = r["height"].integer(1);
    row.width = r["width"].integer(1);
    row.tiles = r["tiles"].integer(1);
    row.pad_calls = r["pad_calls"].integer(0);
    row.median_frames_per_s = r["median_frames_per_s"].real(Num::positive);
    row.min_frames_per_s = r["min_frames_per_s"].real(Num::positive);
    row.max_frames_per_s = r["max_frames_per_s"].real(Num::positive);
    row.samples_frames_per_s = r["samples_frames_per_s"].list<double>([](const Node& s) { return s.real(Num::positive); });
    require_order(r["median_frames_per_s"], row.min_frames_per_s, row.median_frames_per_s, row.max_frames_per_s,
                  "min_frames_per_s <= median_frames_per_s <= max_frames_per_s");
    return row;
  });
  return t;
}

OpTimeRecord read_op_time(const Node& n) {
  OpTimeRecord t;
  t.peak_read_gb_per_s = n["peak_read_gb_per_s"].optional_real(Num::positive);
  t.peak_gflop_per_s = n["peak_gflop_per_s"].optional_real(Num::positive);
  t.rows = n["rows"].list<OpTimeRow>([](const Node& r) {
    OpTimeRow row;
    row.suite = r["suite"].str();
    row.op = r["op"].str();
    row.shape = r["shape"].str();
    row.dtype = r["dtype"].str();
    row.tier = r["tier"].one_of({"reference", "generic", "dedicated", "pytorch"});
    row.variant = r["variant"].str();
    row.warmup_calls = r["warmup_calls"].integer(0);
    row.calls_per_sample = r["calls_per_sample"].integer(1);
    row.input_copies = r.has("input_copies") ? r["input_copies"].integer(1) : 1;   // absent: written before rotation
    row.median_us = r["median_us"].real(Num::positive);
    row.p10_us = r["p10_us"].real(Num::positive);
    row.p90_us = r["p90_us"].real(Num::positive);
    const Node samples = r["samples_us"];
    row.samples_us = samples.list<double>([](const Node& s) { return s.real(Num::positive); });
    if (row.samples_us.empty()) samples.fail("at least one sample", "an empty array");
    require_order(r["median_us"], row.p10_us, row.median_us, row.p90_us, "p10_us <= median_us <= p90_us");
    row.bytes = r["bytes"].real(Num::non_negative);
    row.flops = r["flops"].real(Num::non_negative);
    row.gb_per_s = r["gb_per_s"].real(Num::non_negative);
    row.gflop_per_s = r["gflop_per_s"].real(Num::non_negative);
    row.roofline_percent = r["roofline_percent"].optional_real(Num::non_negative);
    return row;
  });
  return t;
}

CorrectnessRecord read_correctness(const Node& n) {
  CorrectnessRecord c;
  c.ops = n["ops"].list<CorrectnessRow>([](const Node& r) {
    CorrectnessRow row;
    row.op = r["op"].str();
    row.shape = r["shape"].str();
    row.dtype = r["dtype"].str();
    row.tier = r["tier"].one_of({"reference", "generic", "dedicated", "pytorch"});
    row.count = r["count"].integer(0);
    row.max_abs = r["max_abs"].real(Num::non_negative_inf);
    row.max_rel = r["max_rel"].real(Num::non_negative_inf);
    row.rel_floor = r["rel_floor"].real(Num::non_negative);
    row.max_ulp = r["max_ulp"].integer(0);
    row.psnr_db = r["psnr_db"].real(Num::any);
    row.nan_mismatches = r["nan_mismatches"].integer(0);
    row.exact = r["exact"].boolean();
    if (row.exact && (row.max_ulp != 0 || row.nan_mismatches != 0))
      r["exact"].fail("false when max_ulp or nan_mismatches is not 0");
    return row;
  });
  c.end_to_end = n["end_to_end"].list<EndToEndRow>([](const Node& r) {
    return EndToEndRow{r["name"].str(), r["psnr_db"].real(Num::any),
                       r["top1_agreement_percent"].optional_real(Num::percent),
                       r["mean_kl"].optional_real(Num::non_negative_inf)};
  });
  return c;
}

// Byte counts are at most 2^60 (an exbibyte), so that the differences and sums compare forms never overflow.
uint64_t bytes(const Node& n) {
  const uint64_t v = n.unsigned_integer();
  if (v > (uint64_t(1) << 60)) n.fail("a byte count of at most 2^60");
  return v;
}

MemoryRecord read_memory(const Node& n) {
  MemoryRecord m;
  m.process_source = n["process_source"].one_of({"rss", "device"});
  m.allocated_current_bytes = bytes(n["allocated_current_bytes"]);
  m.allocated_peak_bytes = bytes(n["allocated_peak_bytes"]);
  m.reserved_current_bytes = bytes(n["reserved_current_bytes"]);
  m.reserved_peak_bytes = bytes(n["reserved_peak_bytes"]);
  m.process_peak_bytes = bytes(n["process_peak_bytes"]);
  m.process_peak_anon_bytes = bytes(n["process_peak_anon_bytes"]);
  m.process_peak_file_bytes = bytes(n["process_peak_file_bytes"]);
  m.peak_reset_supported = n["peak_reset_supported"].boolean();
  m.present_before_bytes = bytes(n["present_before_bytes"]);
  if (n.has("reserved_before_bytes")) m.reserved_before_bytes = bytes(n["reserved_before_bytes"]);   // absent: older
  if (n.has("reserved_untouched_bytes")) m.reserved_untouched_bytes = n["reserved_untouched_bytes"].integer();
  m.mapped_weights_bytes = bytes(n["mapped_weights_bytes"]);
  if (m.allocated_current_bytes > m.allocated_peak_bytes)
    n["allocated_current_bytes"].fail(fmt::format("at most allocated_peak_bytes ({})", m.allocated_peak_bytes));
  if (m.reserved_current_bytes > m.reserved_peak_bytes)
    n["reserved_current_bytes"].fail(fmt::format("at most reserved_peak_bytes ({})", m.reserved_peak_bytes));
  if (m.allocated_peak_bytes > m.reserved_peak_bytes)
    n["allocated_peak_bytes"].fail(fmt::format("at most reserved_peak_bytes ({})", m.reserved_peak_bytes));
  if (m.reserved_before_bytes > m.reserved_peak_bytes)
    n["reserved_before_bytes"].fail(fmt::format("at most reserved_peak_bytes ({})", m.reserved_peak_bytes));
  // Derived, written for readers of the file; a hand edit that breaks the identity is refused.
  const Node outside = n["outside_allocator_bytes"];
  if (outside.integer() != outside_allocator_bytes(m))
    outside.fail(fmt::format("(process_peak_bytes - present_before_bytes) - (reserved_peak_bytes - "
                             "reserved_before_bytes) + reserved_untouched_bytes = {}",
                             outside_allocator_bytes(m)));
  return m;
}

template <class T, class F>
std::optional<T> optional_record(const Node& n, F&& read) {
  if (n.is_null()) return std::nullopt;
  return read(n);
}

RecordSet read_body(const Node& n) {
  RecordSet s;
  s.manifest = read_manifest(n["manifest"]);
  s.throughput = optional_record<ThroughputRecord>(n["throughput"], read_throughput);
  s.op_time = optional_record<OpTimeRecord>(n["op_time"], read_op_time);
  s.correctness = optional_record<CorrectnessRecord>(n["correctness"], read_correctness);
  s.memory = optional_record<MemoryRecord>(n["memory"], read_memory);
  if (n.has("model_memory")) s.model_memory = optional_record<MemoryRecord>(n["model_memory"], read_memory);
  if (n.has("vae_throughput"))
    s.vae_throughput = optional_record<VaeThroughputRecord>(n["vae_throughput"], read_vae_throughput);
  if (n.has("vae_memory")) s.vae_memory = optional_record<MemoryRecord>(n["vae_memory"], read_memory);
  return s;
}

// Parses, checks the schema and kind, then hands the root to `read`; every failure is a FormatError.
template <class F>
auto parse_document(std::string_view text, std::string_view source, std::string_view kind, F&& read) {
  // Records nest a few levels; a hand-made file nesting thousands would exhaust the stack when freed.
  const Json doc = parse_bounded_json<Json>(text, std::string(source), "records (truncated or malformed?)", 32);
  const Node root(doc, "", source);
  if (!doc.is_object()) root.fail("a JSON object with \"schema\": \"fourfold.records/1\"");
  const Node schema = root["schema"];
  if (schema.str() != kRecordsSchema) schema.fail(fmt::format("\"{}\" (the only version this build reads)", kRecordsSchema));
  const Node k = root["kind"];
  if (k.one_of({"record_set", "check_result"}) != kind)
    k.fail(fmt::format("\"{}\" (this command reads a {} file)", kind, kind));
  try {
    return read(root);
  } catch (const nlohmann::json::exception& e) {
    // The accessors check every type first; this is the net under them, so that no input can crash.
    throw FormatError(fmt::format("{}: malformed record: {}", source, e.what()));
  }
}

std::string read_file(const std::string& path) { return read_regular_file(path, uint64_t(1) << 30); }

}  // namespace

RecordSet parse_record_set(std::string_view text, std::string_view source) {
  return parse_document(text, source, "record_set", [](const Node& root) { return read_body(root); });
}

CheckResult parse_check_result(std::string_view text, std::string_view source) {
  return parse_document(text, source, "check_result", [](const Node& root) {
    CheckResult r;
    r.baseline = read_body(root["baseline"]);
    r.candidate = read_body(root["candidate"]);
    return r;
  });
}

RecordSet read_record_set(const std::string& path) { return parse_record_set(read_file(path), path); }
CheckResult read_check_result(const std::string& path) { return parse_check_result(read_file(path), path); }

}  // namespace fourfold
