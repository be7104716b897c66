// tokenizer.json files and texts that hung, allocated without end or gave silently wrong ids: each ends in an
// error naming the tokenizer file and the JSON path of the field or stage (or, for a text, where it is bad).
// Every case finishes fast on the code before the fix too (the file loaded, or the ids came out), so none of
// these tests can hang.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "fourfold/errors.h"
#include "model/tokenizer/tokenizer.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

using fourfold::testing::throws_with;
using nlohmann::json;

const std::string kDir = std::string(FOURFOLD_TEST_DATA_DIR) + "/tokenizers/";

json minimal() {
  return json::parse(R"({"added_tokens": [{"id": 3, "content": "<s>", "special": true}],
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})");
}

Tokenizer load(const json& doc) { return Tokenizer::from_json_text(doc.dump(), "bad.json"); }

::testing::AssertionResult refused(const json& doc, std::vector<std::string> fragments) {
  fragments.push_back("bad.json");
  return throws_with<FormatError>([&] { load(doc); }, fragments);
}

// --- components that made encode or decode loop forever ---

// An empty Metaspace replacement matched at every position without the search moving on (decode appended
// spaces forever, encode collected matches forever); tokenizers' `char` field refuses it on load.
TEST(TokenizerBadInput, EmptyMetaspaceReplacementIsRefusedAtLoad) {
  json doc = minimal();
  doc["decoder"] = json::parse(R"({"type": "Sequence", "decoders": [{"type": "ByteFallback"},
      {"type": "Metaspace", "replacement": "", "prepend_scheme": "always", "split": true}]})");
  EXPECT_TRUE(refused(doc, {"decoder.decoders[1].replacement", "one character", "\"\""}));
  doc = minimal();
  doc["pre_tokenizer"] = json::parse(R"({"type": "Metaspace", "replacement": "", "prepend_scheme": "first"})");
  EXPECT_TRUE(refused(doc, {"pre_tokenizer.replacement", "one character", "\"\""}));
  doc["pre_tokenizer"]["replacement"] = "\u2581\u2581";
  EXPECT_TRUE(refused(doc, {"pre_tokenizer.replacement", "one character"}));
  doc["pre_tokenizer"]["replacement"] = "\u2581";
  EXPECT_NO_THROW(load(doc));
}

TEST(TokenizerBadInput, EmptyPatternsAreRefusedAtLoad) {
  json doc = minimal();
  doc["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"String", ""}}}, {"behavior", "Isolated"}};
  EXPECT_TRUE(refused(doc, {"pre_tokenizer.pattern.String", "a non-empty pattern"}));
  doc["pre_tokenizer"]["pattern"] = {{"Regex", ""}};
  EXPECT_TRUE(refused(doc, {"pre_tokenizer.pattern.Regex", "a non-empty pattern"}));
  doc = minimal();
  doc["normalizer"] = json::parse(R"({"type": "Sequence", "normalizers": [{"type": "NFC"},
      {"type": "Replace", "pattern": {"String": ""}, "content": "x"}]})");
  EXPECT_TRUE(refused(doc, {"normalizer.normalizers[1].pattern.String", "a non-empty pattern"}));
  doc = minimal();
  doc["decoder"] = {{"type", "Replace"}, {"pattern", {{"Regex", ""}}}, {"content", " "}};
  EXPECT_TRUE(refused(doc, {"decoder.pattern.Regex", "a non-empty pattern"}));
}

// --- sizes from the file that asked for unbounded memory ---

// The id->token table was sized by the largest id: 10^8 asked for about 3 GB from a 60-byte file.
TEST(TokenizerBadInput, VocabIdsAreBoundedByTheNumberOfEntries) {
  const std::string tiny = R"({"model": {"type": "BPE", "vocab": {"a": 100000000}, "merges": []}})";
  EXPECT_TRUE(throws_with<FormatError>([&] { Tokenizer::from_json_text(tiny, "bad.json"); },
                                       {"bad.json", "model.vocab[\"a\"]", "an id below 1", "100000000"}));
  json doc = minimal();
  doc["model"]["vocab"]["b"] = 4;  // three vocab entries and one added token: ids below 4
  EXPECT_TRUE(refused(doc, {"model.vocab[\"b\"]", "an id below 4", "the number of entries"}));
  doc["model"]["vocab"]["b"] = 1;
  EXPECT_EQ(load(doc).vocab_size(), 4);
  doc["added_tokens"] = json::array();  // three entries: ids below 3
  doc["model"]["vocab"]["b"] = 3;
  EXPECT_TRUE(refused(doc, {"model.vocab[\"b\"]", "an id below 3"}));
}

// A template naming one special token with many ids many times over multiplied into billions of ids per prompt.
TEST(TokenizerBadInput, TemplateIdsAreBounded) {
  json doc = minimal();
  json single = json::array();
  for (int i = 0; i < 5000; ++i) single.push_back({{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}});
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  doc["post_processor"] = {{"type", "TemplateProcessing"}, {"single", single},
                           {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {3}}, {"tokens", {"<s>"}}}}}}};
  EXPECT_TRUE(refused(doc, {"post_processor.single[4096].SpecialToken.id", "at most 4096"}));
}

// Stacked stages that each lengthen the text multiplied a prompt's size per stage.
TEST(TokenizerBadInput, StagesMayNotGrowTheTextWithoutBound) {
  json doc = minimal();
  json normalizers = json::array();
  for (int i = 0; i < 20; ++i) normalizers.push_back({{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", "aa"}});
  doc["normalizer"] = {{"type", "Sequence"}, {"normalizers", normalizers}};
  const Tokenizer doubling = load(doc);
  EXPECT_TRUE(throws_with<UnsupportedError>([&] { doubling.encode("a"); },
                                            {"bad.json", "normalizer.normalizers[", "64 times"}));

  doc = minimal();
  json byte_levels = json::array();
  for (int i = 0; i < 20; ++i) byte_levels.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}});
  doc["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", byte_levels}};
  const Tokenizer byte_level = load(doc);  // each stage maps a space's two bytes to two 2-byte characters
  EXPECT_TRUE(throws_with<UnsupportedError>([&] { byte_level.encode("  "); },
                                            {"bad.json", "pre_tokenizer.pretokenizers[", "64 times"}));

  doc = minimal();
  json decoders = json::array();
  for (int i = 0; i < 20; ++i) decoders.push_back({{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", "aa"}});
  doc["decoder"] = {{"type", "Sequence"}, {"decoders", decoders}};
  const Tokenizer decoding = load(doc);
  EXPECT_TRUE(throws_with<UnsupportedError>([&] { decoding.decode(std::vector<int64_t>{0}); },
                                            {"bad.json", "decoder.decoders[", "64 times"}));
  StreamingDecoder stream(decoding);
  EXPECT_THROW(stream.push(0), UnsupportedError);
}

// --- silently wrong ids ---

// A search PCRE2 gave up on (its match limit) was taken for "no match", so the text was silently split
// differently. Nested quantifiers on a text that almost matches backtrack exponentially.
TEST(TokenizerBadInput, RegexLimitIsAnErrorNamingFileAndPattern) {
  json doc = minimal();
  doc["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(a+)+$"}}}, {"behavior", "Isolated"}};
  const Tokenizer tok = Tokenizer::from_json_text(doc.dump(), "slow/tokenizer.json");
  EXPECT_EQ(tok.encode("baa"), (std::vector<int64_t>{1, 0, 0}));  // "b", then "aa" matched: searched in full
  const std::string text = std::string(64, 'a') + "b";
  EXPECT_TRUE(throws_with<UnsupportedError>([&] { tok.encode(text); },
                                            {"slow/tokenizer.json", "pre_tokenizer.pattern.Regex", "'(a+)+$'",
                                             "limit", "searching from byte 0 of a 65-byte piece"}));
}

// The limits leave room for real patterns on long texts (a search that outgrows JIT's stack goes on in the
// interpreter instead of failing).
TEST(TokenizerBadInput, LongTextsStayWithinTheLimits) {
  const Tokenizer tok = Tokenizer::from_file(kDir + "qwen2.json");
  const std::string spaces(200000, ' ');
  const std::vector<int64_t> ids = tok.encode(spaces + "a");
  EXPECT_EQ(tok.decode(ids), spaces + "a");
}

// --- unclear errors ---

TEST(TokenizerBadInput, InvalidUtf8NamesTheSourceAndTheByteOffset) {
  const Tokenizer tok = Tokenizer::from_file(kDir + "qwen2.json");
  EXPECT_TRUE(throws_with<ValueError>([&] { tok.encode("ab\xff" "cd"); },
                                      {"encode", "'text'", "valid UTF-8", "0xFF at byte offset 2"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { tok.encode("h\xc3\xa9llo \xe2\x82", true, "--prompt-file p.txt"); },
                                      {"'--prompt-file p.txt'", "0xE2 0x82 at byte offset 7"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { tok.encode("\xed\xa0\x80", false, "--prompt"); },
                                      {"'--prompt'", "0xED at byte offset 0"}));  // a surrogate
}

}  // namespace
}  // namespace fourfold::model
