// The bad-input classes that crashed, hung or misled (issue "Bad input never crashes"), one test each, at the
// library level: every one must end in a FormatError/ValueError that names the file and the field.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check/compare.h"
#include "check/records.h"
#include "check/sample_records.h"
#include "check/suites.h"
#include "core/checked_math.h"
#include "core/file_io.h"
#include "model/llm/model_config.h"
#include "model/llm/model_folder.h"
#include "model/llm/model_maker.h"
#include "model/formats/safetensors.h"
#include "model/temp_dirs.h"
#include "model/tokenizer/tokenizer.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;
using fourfold::testing::throws_with;

const testing::TempDirs kTemp("fourfold_bad_input_test");

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// 1. Arrays nested 100,000 deep overflowed the stack (freeing and printing recurse per level).
TEST(BadInput, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = nested(100000);
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_model_config(R"({"model_type": "llama", "x": )" + deep + "}", "c/config.json"); },
      {"c/config.json", "nested at most 128"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { Tokenizer::from_json_text(deep, "t/tokenizer.json"); },
                                       {"t/tokenizer.json", "nested"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_record_set(deep, "r.json"); }, {"r.json", "nested"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_suite(R"({"suite": )" + deep + "}", "s.json"); },
                                       {"s.json", "nested"}));
  // A safetensors header nesting deep inside __metadata__ and inside a tensor entry.
  for (const std::string& header : {R"({"__metadata__": {"a": )" + deep + "}}", R"({"w": )" + deep + "}", deep}) {
    const fs::path file = kTemp.make() / "deep.safetensors";
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(uint64_t(header.size()) >> (8 * i));
    write(file, bytes + header);
    EXPECT_TRUE(throws_with<FormatError>([&] { read_safetensors(file); }, {file.string(), "nested"}));
  }
  // Strings may hold any brackets.
  EXPECT_NO_THROW(parse_model_config(R"({"model_type": "llama", "x": ")" + deep + "\"}", "c"));
}

// 2. Sizes that imply absurd models: refused at once from the config alone, not built entry by entry.
TEST(BadInput, AbsurdConfigSizesAreRefusedBeforeAnythingIsBuilt) {
  const fs::path dir = kTemp.make();
  make_model("tiny-llama", dir, "bf16", 1, std::nullopt);
  nlohmann::json c = nlohmann::json::parse(read_regular_file(dir / "config.json"));
  for (const auto& [key, value] : {std::pair<const char*, int64_t>{"num_hidden_layers", 2000000000},
                                   {"vocab_size", 2000000000}, {"intermediate_size", 2000000000}}) {
    nlohmann::json bad = c;
    bad[key] = value;
    write(dir / "config.json", bad.dump());
    EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); }, {"config.json", "fits in the folder"})) << key;
  }
  nlohmann::json moe = nlohmann::json::parse(model_config_to_json(preset_config("tiny-moe")));
  moe["num_experts"] = 2000000000;
  const fs::path moe_dir = kTemp.make("_moe");
  make_model("tiny-moe", moe_dir, "bf16", 1, std::nullopt);
  write(moe_dir / "config.json", moe.dump());
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(moe_dir); }, {"config.json", "fits in the folder"}));
  // 5. Products of config sizes that overflow 64 bits are errors, not wrapped values.
  nlohmann::json wide = c;
  wide["head_dim"] = 2147483647;
  wide["num_attention_heads"] = 2147483647;
  wide["num_key_value_heads"] = 2147483647;
  write(dir / "config.json", wide.dump());
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); }, {"config.json", "64 bits"}));
  nlohmann::json huge = c;
  huge["hidden_size"] = int64_t(1) << 40;
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_model_config(huge.dump(), "c.json"); },
                                       {"hidden_size", "2147483647"}));
  EXPECT_TRUE(throws_with<FormatError>([] { checked_mul(int64_t(1) << 40, int64_t(1) << 40, "w", "x"); }, {"w", "x"}));
}

// 3. Numbers outside the double range were an uncaught exception.
TEST(BadInput, NumbersOutsideTheDoubleRangeAreFormatErrors) {
  const std::string big = "1" + std::string(400, '0');
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_record_set(R"({"schema": 1e999})", "r.json"); },
                                       {"r.json", "double range"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_record_set(R"({"schema": )" + big + "}", "r.json"); },
                                       {"r.json", "double range"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_suite(R"({"suite": "a", "rows": [1e999]})", "s.json"); },
                                       {"s.json", "double range"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_model_config(R"({"model_type": "llama", "rope_theta": 1e999})", "c"); },
                                       {"double range"}));
}

// 4. A write that does not finish leaves the earlier file, or none: never a truncated one.
TEST(BadInput, WritesLandWholeOrNotAtAll) {
  const fs::path dir = kTemp.make();
  const fs::path file = dir / "records.json";
  write_file_atomically(file, "old");
  {
    AtomicFile f(file);
    f.write("new, half written");
  }   // destroyed uncommitted: as if the process died here
  EXPECT_EQ(read_regular_file(file), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);   // no temporary left
  // A check's set: the old set until commit, then the whole new one.
  const fs::path out = dir / "out";
  {
    OutputFolder first(out, {"a.json", "b.json"}, "--out");
    write_file_atomically(first.staging() + "/a.json", "1");
    write_file_atomically(first.staging() + "/b.json", "1");
    first.commit();
  }
  {
    OutputFolder second(out, {"a.json", "b.json"}, "--out");
    write_file_atomically(second.staging() + "/a.json", "2");   // killed before b.json and the commit
  }
  EXPECT_EQ(read_regular_file(out / "a.json"), "1");
  EXPECT_EQ(read_regular_file(out / "b.json"), "1");
  // A folder holding files this tool did not write is refused, not replaced.
  write(out / "notes.txt", "mine");
  EXPECT_TRUE(throws_with<FormatError>([&] { OutputFolder(out, {"a.json", "b.json"}, "--out"); },
                                       {"--out", "notes.txt"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { OutputFolder(out / "notes.txt", {}, "--out"); },
                                       {"--out", "non-folder"}));
}

// 5. Records fields near 2^63 and a max-ULP threshold of 2^63 - 1 overflowed.
TEST(BadInput, RecordsAndThresholdsNearTheIntegerLimits) {
  RecordSet s = fourfold::testing::sample_record_set();
  nlohmann::json j = nlohmann::json::parse(to_json_text(s));
  j["memory"]["process_peak_bytes"] = std::numeric_limits<uint64_t>::max() - 1;
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_record_set(j.dump(), "r.json"); }, {"process_peak_bytes", "2^60"}));
  const RecordSet base = fourfold::testing::sample_record_set();
  RecordSet cand = fourfold::testing::sample_record_set("dedicated");
  cand.correctness->ops[0].max_ulp += 3;
  Thresholds t;
  t.max_ulp_increase = std::numeric_limits<int64_t>::max();
  EXPECT_FALSE(compare_records(base, cand, t).correctness_failed());
  t.max_ulp_increase = 2;
  EXPECT_TRUE(compare_records(base, cand, t).correctness_failed());
}

// 7. A FIFO as config.json or model.safetensors blocked forever; a directory or device is no file either.
TEST(BadInput, FilesThatAreNotRegularFilesAreRefused) {
  const fs::path dir = kTemp.make();
  ASSERT_EQ(::mkfifo((dir / "config.json").c_str(), 0600), 0);
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(dir); }, {"config.json", "a FIFO"}));
  const fs::path model = kTemp.make("_model");
  make_model("tiny-llama", model, "bf16", 1, std::nullopt);
  fs::remove(model / "model.safetensors");
  ASSERT_EQ(::mkfifo((model / "model.safetensors").c_str(), 0600), 0);
  EXPECT_TRUE(throws_with<FormatError>([&] { load_model_folder(model); }, {"model.safetensors", "a FIFO"}));
  EXPECT_TRUE(throws_with<FormatError>([] { read_record_set("/dev/zero"); }, {"/dev/zero", "character device"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { Tokenizer::from_file(dir); }, {"a directory"}));
}

}  // namespace
}  // namespace fourfold::model
