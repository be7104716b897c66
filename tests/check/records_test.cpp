// The records' JSON: a full round trip, and a FormatError naming the file and the field for every bad input.
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check/records.h"
#include "check/sample_records.h"
#include "fourfold/errors.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using testing::sample_record_set;
using testing::TempFile;
using testing::throws_with;

CheckResult sample_check_result() {
  CheckResult r{sample_record_set("generic"), sample_record_set("")};
  r.candidate.manifest.op_tiers = {{"softmax", 0, 0, 10, "avx2"}};
  r.candidate.op_time->rows[0] = testing::op_row("decode", "linear", "1x4096", 45, 50, 55);
  r.candidate.memory->process_peak_bytes = 12000;
  return r;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// The sample record set as JSON, edited by `edit`, parsed: the error message (empty when it parsed).
template <class F>
std::string parse_error_after(F&& edit) {
  nlohmann::json doc = nlohmann::json::parse(to_json_text(sample_record_set()));
  edit(doc);
  try {
    parse_record_set(doc.dump(), "edited.json");
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

TEST(Records, FullCheckResultRoundTrips) {
  const CheckResult original = sample_check_result();
  const std::string text = to_json_text(original);
  EXPECT_NE(text.find("\"schema\": \"fourfold.records/1\""), std::string::npos);
  EXPECT_EQ(parse_check_result(text, "memory"), original);
  TempFile file("round_trip.json");
  write_check_result(file.path, original);
  const CheckResult back = read_check_result(file.path);
  EXPECT_EQ(back, original);
  // Non-finite values survive as strings, not as JSON null.
  EXPECT_TRUE(std::isinf(back.baseline.correctness->ops[1].psnr_db));
  EXPECT_TRUE(std::isinf(back.baseline.correctness->ops[0].max_abs));
  EXPECT_LT(back.baseline.correctness->end_to_end[1].psnr_db, 0);
  EXPECT_FALSE(back.baseline.op_time->rows[1].roofline_percent.has_value());
}

TEST(Records, RecordSetRoundTripsWithNaNAndMissingRecords) {
  RecordSet s = sample_record_set();
  s.correctness->ops[0].psnr_db = std::nan("");
  s.correctness->ops[0].nan_mismatches = 3;
  s.throughput.reset();
  s.memory.reset();
  const RecordSet back = parse_record_set(to_json_text(s), "memory");
  EXPECT_TRUE(std::isnan(back.correctness->ops[0].psnr_db));
  EXPECT_FALSE(back.throughput.has_value());
  EXPECT_FALSE(back.memory.has_value());
  EXPECT_EQ(back.op_time, s.op_time);
  EXPECT_EQ(back.manifest, s.manifest);
}

TEST(Records, ModelMemoryRoundTripsAndMayBeAbsent) {
  const RecordSet s = sample_record_set();
  ASSERT_TRUE(s.model_memory.has_value());
  EXPECT_EQ(parse_record_set(to_json_text(s), "m").model_memory, s.model_memory);
  // Records written before the end-to-end workloads have no model_memory key: read as absent.
  nlohmann::json doc = nlohmann::json::parse(to_json_text(s));
  doc.erase("model_memory");
  EXPECT_FALSE(parse_record_set(doc.dump(), "old.json").model_memory.has_value());
  doc["model_memory"] = nullptr;
  EXPECT_FALSE(parse_record_set(doc.dump(), "null.json").model_memory.has_value());
}

TEST(Records, UnreadableFileIsAFormatErrorNamingIt) {
  EXPECT_TRUE(throws_with<FormatError>([] { read_record_set("/nonexistent/records.json"); },
                                       {"/nonexistent/records.json", "No such file"}));
}

TEST(Records, TruncatedFileIsAFormatErrorNamingIt) {
  TempFile file("truncated.json");
  const std::string text = to_json_text(sample_record_set());
  write(file.path, text.substr(0, text.size() / 2));
  EXPECT_TRUE(throws_with<FormatError>([&] { read_record_set(file.path); }, {file.path, "valid JSON"}));
  write(file.path, "");
  EXPECT_TRUE(throws_with<FormatError>([&] { read_record_set(file.path); }, {file.path, "valid JSON"}));
}

TEST(Records, WrongSchemaVersionIsRefused) {
  const std::string msg = parse_error_after([](nlohmann::json& d) { d["schema"] = "fourfold.records/2"; });
  EXPECT_NE(msg.find("edited.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'schema'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fourfold.records/2"), std::string::npos) << msg;
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d.erase("schema"); }).find("'schema'"), std::string::npos);
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d = nlohmann::json::array(); }).find("(document)"),
            std::string::npos);
}

TEST(Records, CheckResultAndRecordSetAreNotConfused) {
  const std::string text = to_json_text(sample_record_set());
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_check_result(text, "a.json"); }, {"a.json", "'kind'", "check_result"}));
}

TEST(Records, MissingFieldIsNamed) {
  const std::string msg = parse_error_after([](nlohmann::json& d) { d["op_time"]["rows"][1].erase("median_us"); });
  EXPECT_NE(msg.find("edited.json: field 'op_time.rows[1].median_us'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no such field"), std::string::npos) << msg;
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["manifest"]["workload"].erase("seed"); })
                .find("'manifest.workload.seed'"),
            std::string::npos);
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d.erase("memory"); }).find("'memory'"), std::string::npos);
}

TEST(Records, WrongTypeIsNamed) {
  std::string msg = parse_error_after([](nlohmann::json& d) { d["manifest"]["threads"] = "many"; });
  EXPECT_NE(msg.find("'manifest.threads'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected an integer >= 1, found string \"many\""), std::string::npos) << msg;
  msg = parse_error_after([](nlohmann::json& d) { d["correctness"]["ops"][0]["exact"] = 1; });
  EXPECT_NE(msg.find("'correctness.ops[0].exact'"), std::string::npos) << msg;
  msg = parse_error_after([](nlohmann::json& d) { d["op_time"]["rows"] = nlohmann::json::object(); });
  EXPECT_NE(msg.find("'op_time.rows'"), std::string::npos) << msg;
  msg = parse_error_after([](nlohmann::json& d) { d["manifest"]["workload"]["kind"] = "benchmark"; });
  EXPECT_NE(msg.find("'manifest.workload.kind'"), std::string::npos) << msg;
  msg = parse_error_after([](nlohmann::json& d) { d["manifest"]["workload"]["repeats"] = 2.5; });
  EXPECT_NE(msg.find("'manifest.workload.repeats'"), std::string::npos) << msg;
}

TEST(Records, NegativeTimeIsRefused) {
  const std::string msg = parse_error_after([](nlohmann::json& d) { d["op_time"]["rows"][0]["p10_us"] = -5.0; });
  EXPECT_NE(msg.find("'op_time.rows[0].p10_us'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("positive"), std::string::npos) << msg;
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["op_time"]["rows"][2]["samples_us"][1] = 0; })
                .find("'op_time.rows[2].samples_us[1]'"),
            std::string::npos);
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["throughput"]["rows"][1]["min_tokens_per_s"] = -1; })
                .find("'throughput.rows[1].min_tokens_per_s'"),
            std::string::npos);
}

TEST(Records, HandEditedNonsenseIsRefused) {
  // NaN or null where a time must be a number; NaN is allowed only for PSNR.
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["op_time"]["rows"][0]["median_us"] = "nan"; })
                .find("'op_time.rows[0].median_us'"),
            std::string::npos);
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["op_time"]["rows"][0]["median_us"] = nullptr; })
                .find("'op_time.rows[0].median_us'"),
            std::string::npos);
  EXPECT_EQ(parse_error_after([](nlohmann::json& d) { d["correctness"]["ops"][0]["psnr_db"] = "nan"; }), "");
  // Values each valid but contradicting each other.
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["op_time"]["rows"][0]["p10_us"] = 105.0; })
                .find("p10_us <= median_us <= p90_us"),
            std::string::npos);
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["correctness"]["ops"][1]["max_ulp"] = 3; })
                .find("'correctness.ops[1].exact'"),
            std::string::npos);
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["memory"]["outside_allocator_bytes"] = 0; })
                .find("'memory.outside_allocator_bytes'"),
            std::string::npos);
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["memory"]["allocated_peak_bytes"] = 6000; })
                .find("'memory.allocated_peak_bytes'"),
            std::string::npos);
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["memory"]["reserved_peak_bytes"] = -1; })
                .find("'memory.reserved_peak_bytes'"),
            std::string::npos);
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["correctness"]["end_to_end"][0]["top1_agreement_percent"] = 101; })
                .find("'correctness.end_to_end[0].top1_agreement_percent'"),
            std::string::npos);
  EXPECT_NE(parse_error_after([](nlohmann::json& d) { d["op_time"]["rows"][0]["samples_us"] = nlohmann::json::array(); })
                .find("at least one sample"),
            std::string::npos);
}

TEST(Records, DeepNestingIsRefusedNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_record_set(deep, "deep.json"); }, {"deep.json", "nested"}));
}

// Every way of breaking one value: a FormatError or (where the value is still valid) success, never another
// exception or a crash.
void collect_leaves(const nlohmann::json& j, const nlohmann::json::json_pointer& at,
                    std::vector<nlohmann::json::json_pointer>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) collect_leaves(it.value(), at / it.key(), out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) collect_leaves(j[i], at / i, out);
  }
  out.push_back(at);
}

TEST(Records, EveryValueReplacedByNonsenseIsHandled) {
  const nlohmann::json original = nlohmann::json::parse(to_json_text(sample_record_set()));
  std::vector<nlohmann::json::json_pointer> leaves;
  collect_leaves(original, nlohmann::json::json_pointer(), leaves);
  const nlohmann::json nonsense[] = {"x", -1, nullptr, nlohmann::json::array(), nlohmann::json::object(), 1e308, 2.5,
                                     "nan", 18446744073709551615ull};
  int refused = 0;
  for (const auto& at : leaves) {
    if (at.empty()) continue;
    for (const auto& value : nonsense) {
      nlohmann::json doc = original;
      doc[at] = value;
      try {
        parse_record_set(doc.dump(), "fuzz.json");
      } catch (const FormatError& e) {
        ++refused;
        EXPECT_NE(std::string(e.what()).find("fuzz.json"), std::string::npos) << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << at.to_string() << " = " << value.dump() << ": " << e.what();
      }
    }
  }
  EXPECT_GT(refused, 500);
  const std::string text = to_json_text(sample_check_result());
  for (size_t n = 0; n < text.size(); n += 41) {
    EXPECT_THROW(parse_check_result(text.substr(0, n), "cut.json"), FormatError) << n;
  }
}

TEST(Records, WriterRefusesWhatTheReaderWouldRefuse) {
  RecordSet s = sample_record_set();
  s.op_time->rows[0].median_us = -1;
  TempFile file("refused.json");
  EXPECT_TRUE(throws_with<ValueError>([&] { write_record_set(file.path, s); }, {"op_time.rows[0].median_us"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { write_record_set("/nonexistent/dir/x.json", sample_record_set()); },
                                       {"/nonexistent/dir/x.json"}));
}

TEST(Records, OutsideTheAllocatorArithmetic) {
  MemoryRecord m;
  m.process_peak_bytes = 9000;
  m.reserved_peak_bytes = 5000;
  m.present_before_bytes = 3000;
  EXPECT_EQ(outside_allocator_bytes(m), 1000);
  // Reserved memory that was never touched is not resident: the figure goes negative and says so.
  m.process_peak_bytes = 7000;
  EXPECT_EQ(outside_allocator_bytes(m), -1000);
  const RecordSet s = sample_record_set();
  EXPECT_EQ(nlohmann::json::parse(to_json_text(s))["memory"]["outside_allocator_bytes"].get<int64_t>(), 1000);
}

TEST(Records, QuantilesAndRatesFromSamples) {
  OpTimeRow r;
  r.samples_us = {10, 20, 30};
  r.bytes = 2e6;      // 2 MB in 20 µs = 100 GB/s
  r.flops = 4e6;      // 200 GFLOP/s
  summarize_samples(r, std::nullopt);
  EXPECT_DOUBLE_EQ(r.median_us, 20);
  EXPECT_DOUBLE_EQ(r.gb_per_s, 100);
  EXPECT_DOUBLE_EQ(r.gflop_per_s, 200);
  EXPECT_FALSE(r.roofline_percent.has_value());   // no probe, no ceiling
  summarize_samples(r, 10.0);
  ASSERT_TRUE(r.roofline_percent.has_value());
  EXPECT_NEAR(*r.roofline_percent, 50.0, 1e-9);   // 10 µs at the ceilings of 20 µs measured
}

TEST(Records, CorrectnessRowFromErrorStats) {
  ErrorStats e;
  e.count = 10;
  e.max_abs = 0.5;
  e.max_ulp = 3;
  e.psnr_db = 30;
  const CorrectnessRow r = correctness_row("gelu", "4x4", "float16", "generic", e);
  EXPECT_EQ(r.op, "gelu");
  EXPECT_EQ(r.count, 10);
  EXPECT_EQ(r.max_ulp, 3);
  EXPECT_DOUBLE_EQ(r.psnr_db, 30);
}

}  // namespace
}  // namespace fourfold
