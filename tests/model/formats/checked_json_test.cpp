// model/formats/checked_json.h: one wording for every reader of JSON fourfold does not control, each value's
// type and range checked where it is read.
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "check/records.h"
#include "check/suites.h"
#include "model/formats/checked_json.h"
#include "model/llm/generation_config.h"
#include "model/llm/model_config.h"
#include "model/tokenizer/tokenizer.h"
#include "model/vae/wan_vae_config.h"
#include "support/test_support.h"

namespace fourfold {
namespace {

using nlohmann::json;
using testing::throws_with;

TEST(CheckedJson, SaysTheSourceThePathWhatWasExpectedAndTheValueWithItsType) {
  const CheckedJson c("cfg.json");
  const json doc = json::parse(R"({"a": {"n": -4, "s": "many", "l": [1, "x"]}})");
  EXPECT_TRUE(throws_with<FormatError>([&] { c.integer(doc["a"]["n"], "a.n"); },
                                       {"cfg.json: field 'a.n': expected a positive integer, found number -4"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { c.integer(doc["a"]["s"], "a.s", 0, 9); },
                                       {"field 'a.s': expected an integer in [0, 9], found string \"many\""}));
  EXPECT_TRUE(throws_with<FormatError>([&] { c.integers(doc["a"]["l"], "a.l"); }, {"field 'a.l[1]'", "found string \"x\""}));
  EXPECT_TRUE(throws_with<FormatError>([&] { c.need(doc, "", "b"); }, {"field 'b': expected a value, found none (missing)"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { c.object(json::array(), ""); }, {"field '(document)'", "found array []"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { c.only_keys(doc["a"], "a", {"n", "s"}); },
                                       {"field 'a.l': expected a known field (n, s), found an unknown field"}));
  EXPECT_EQ(c.choice<int>(json("two"), "k", {{"one", 1}, {"two", 2}}), 2);
}

// An unsigned integer past int64 is refused, not wrapped to a negative or small value; null reads as absent.
TEST(CheckedJson, LargeUnsignedIntegersAreRefusedAndNullIsAbsent) {
  const CheckedJson c("cfg.json");
  EXPECT_TRUE(throws_with<FormatError>([&] { c.integer(json(uint64_t{1} << 63), "n", std::numeric_limits<int64_t>::min()); },
                                       {"expected an integer in the int64 range", "found number 9223372036854775808"}));
  const json doc = json::parse(R"({"x": null, "y": 1})");
  EXPECT_EQ(CheckedJson::find(doc, "x"), nullptr);
  EXPECT_EQ(CheckedJson::find(doc, "z"), nullptr);
  ASSERT_NE(CheckedJson::find(doc, "y"), nullptr);
}

// A value that is not valid UTF-8 is still said (replaced), never a second exception from the message itself.
TEST(CheckedJson, InvalidUtf8IsSaidNotThrown) {
  const CheckedJson c("cfg.json");
  const json bad_text = std::string("a\xff" "b");
  EXPECT_TRUE(throws_with<FormatError>([&] { c.integer(bad_text, "k"); }, {"field 'k'", "found string"}));
}

// Each reader words its refusals the same way: field '<path>', and the found value with its JSON type.
TEST(CheckedJson, EveryReaderUsesTheOneWording) {
  EXPECT_TRUE(throws_with<FormatError>([] { parse_suite("[1]", "x.json"); },
                                       {"suite file 'x.json': field '(document)': expected an object, found array [1]"}));
  EXPECT_TRUE(throws_with<FormatError>([] { model::parse_model_config("[1]", "c.json"); },
                                       {"c.json: field '(document)': expected a JSON object, found array [1]"}));
  EXPECT_TRUE(throws_with<FormatError>([] { model::parse_generation_config("[1]", "g.json"); },
                                       {"g.json: field '(document)': expected a JSON object, found array [1]"}));
  EXPECT_TRUE(throws_with<FormatError>([] { model::parse_wan_vae_config(R"({"base_dim": "many"})", "v.json"); },
                                       {"v.json: field 'base_dim'", "found string \"many\""}));
  EXPECT_TRUE(throws_with<FormatError>([] { model::Tokenizer::from_json_text(R"({"model": 3})", "t.json"); },
                                       {"t.json: field 'model': expected an object, found number 3"}));
  EXPECT_TRUE(throws_with<FormatError>([] { parse_record_set("[1]", "r.json"); },
                                       {"r.json: field '(document)'", "found array [1]"}));
}

}  // namespace
}  // namespace fourfold
