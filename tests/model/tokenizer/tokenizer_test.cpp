// tokenizer.json: the four fixture tokenizers (Qwen2, Llama 3, Llama 2, Mistral pipelines) give exactly the
// ids and texts Hugging Face tokenizers gave (golden.json, scripts/make_tokenizer_fixtures.py); streaming
// decode joins to decode; each malformed file names its field.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <random>
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

const json& golden() {
  static const json g = [] {
    std::ifstream in(kDir + "golden.json");
    return json::parse(in);
  }();
  return g;
}

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& [name, _] : golden()["tokenizers"].items()) names.push_back(name);
  return names;
}

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

// Pushes ids one at a time; every piece must be valid UTF-8; returns the joined text.
std::string stream(const Tokenizer& tok, const std::vector<int64_t>& ids, bool skip, std::vector<std::string>* pieces = nullptr) {
  StreamingDecoder decoder(tok, skip);
  std::string all;
  for (const int64_t id : ids) {
    const std::string piece = decoder.push(id);
    EXPECT_TRUE(valid_utf8(piece)) << "piece after id " << id;
    if (pieces) pieces->push_back(piece);
    all += piece;
  }
  const std::string rest = decoder.finish();
  EXPECT_TRUE(valid_utf8(rest));
  if (pieces) pieces->push_back(rest);
  return all + rest;
}

class Fixture : public ::testing::TestWithParam<std::string> {
 protected:
  const json& spec() const { return golden()["tokenizers"][GetParam()]; }
  Tokenizer load() const { return Tokenizer::from_file(kDir + spec()["file"].get<std::string>()); }
};

TEST_P(Fixture, EncodeMatchesGoldenIds) {
  const Tokenizer tok = load();
  const json& texts = golden()["texts"];
  const json& cases = spec()["cases"];
  ASSERT_EQ(texts.size(), cases.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string text = texts[i].get<std::string>();
    EXPECT_EQ(tok.encode(text, true), cases[i]["ids"].get<std::vector<int64_t>>()) << "text " << i << ": " << text;
    EXPECT_EQ(tok.encode(text, false), cases[i]["ids_no_special"].get<std::vector<int64_t>>())
        << "text " << i << ": " << text;
  }
}

TEST_P(Fixture, DecodeMatchesGoldenText) {
  const Tokenizer tok = load();
  EXPECT_EQ(tok.vocab_size(), spec()["vocab_size"].get<int64_t>());
  for (const json& c : spec()["cases"]) {
    const auto ids = c["ids"].get<std::vector<int64_t>>();
    EXPECT_EQ(tok.decode(ids), c["decoded"].get<std::string>());
    EXPECT_EQ(tok.decode(ids, true), c["decoded_skip_special"].get<std::string>());
  }
}

TEST_P(Fixture, StreamingJoinsToDecode) {
  const Tokenizer tok = load();
  for (const json& c : spec()["cases"]) {
    const auto ids = c["ids"].get<std::vector<int64_t>>();
    for (const bool skip : {false, true}) EXPECT_EQ(stream(tok, ids, skip), tok.decode(ids, skip));
  }
}

// Arbitrary ids, as a sampler may produce: cut characters, lone byte tokens, specials anywhere.
TEST_P(Fixture, StreamingJoinsToDecodeOnRandomIds) {
  const Tokenizer tok = load();
  std::mt19937_64 rng(1234);
  std::uniform_int_distribution<int64_t> any(0, tok.vocab_size() - 1);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int64_t> ids(1 + trial % 23);
    for (int64_t& id : ids) id = any(rng);
    for (const bool skip : {false, true}) {
      const std::string text = tok.decode(ids, skip);
      EXPECT_TRUE(valid_utf8(text));
      EXPECT_EQ(stream(tok, ids, skip), text);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, Fixture, ::testing::ValuesIn(fixture_names()),
                         [](const auto& info) { return info.param; });

TEST(Tokenizer, FixturesCoverAllFour) {
  EXPECT_EQ(fixture_names(), (std::vector<std::string>{"llama2", "llama3", "mistral", "qwen2"}));
}

TEST(Tokenizer, SpecialTokensAndLookup) {
  const Tokenizer qwen = Tokenizer::from_file(kDir + "qwen2.json");
  const auto im_start = qwen.token_to_id("<|im_start|>");
  ASSERT_TRUE(im_start.has_value());
  EXPECT_TRUE(qwen.is_special(*im_start));
  EXPECT_FALSE(qwen.is_special(*qwen.token_to_id("a")));
  EXPECT_FALSE(qwen.token_to_id("no such token").has_value());
  const std::vector<int64_t> ids = qwen.encode("<|im_start|>user");
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), *im_start);
  EXPECT_EQ(qwen.decode(ids), "<|im_start|>user");
  EXPECT_EQ(qwen.decode(ids, true), "user");

  const Tokenizer llama3 = Tokenizer::from_file(kDir + "llama3.json");
  const int64_t bos = *llama3.token_to_id("<|begin_of_text|>");
  EXPECT_EQ(llama3.encode("hi").front(), bos);
  EXPECT_NE(llama3.encode("hi", false).front(), bos);

  const Tokenizer llama2 = Tokenizer::from_file(kDir + "llama2.json");
  EXPECT_EQ(llama2.token_to_id("<0x41>"), 3 + 0x41);
  EXPECT_EQ(llama2.token_to_id("<s>"), 1);
  EXPECT_EQ(llama2.encode("hi").front(), 1);
}

// An emoji the small vocab lacks comes out as four byte tokens; nothing is emitted until the character is whole.
TEST(Tokenizer, StreamingHoldsByteFallbackRuns) {
  const Tokenizer tok = Tokenizer::from_file(kDir + "llama2.json");
  const std::vector<int64_t> emoji = tok.encode("\U0001f9ec", false);  // 🧬, not in the training corpus
  const std::vector<int64_t> bytes = {3 + 0xF0, 3 + 0x9F, 3 + 0xA7, 3 + 0xAC};
  ASSERT_GE(emoji.size(), 4u);
  EXPECT_EQ(std::vector<int64_t>(emoji.end() - 4, emoji.end()), bytes);
  std::vector<int64_t> ids = bytes;
  ids.push_back(*tok.token_to_id("▁a"));
  std::vector<std::string> pieces;
  EXPECT_EQ(stream(tok, ids, false, &pieces), "\U0001f9ec a");
  EXPECT_EQ(pieces[0] + pieces[1] + pieces[2] + pieces[3], "");
  // A run cut short is invalid as a whole: every byte of it becomes U+FFFD, as tokenizers' ByteFallback.
  EXPECT_EQ(tok.decode(std::vector<int64_t>{3 + 0xF0, 3 + 0x9F}), "\uFFFD\uFFFD");
  EXPECT_EQ(stream(tok, {3 + 0xF0, 3 + 0x9F}, false), "\uFFFD\uFFFD");
}

TEST(Tokenizer, StreamingNeverSplitsAByteLevelCharacter) {
  const Tokenizer tok = Tokenizer::from_file(kDir + "qwen2.json");
  const std::vector<int64_t> ids = tok.encode("\U0001f9ec\U0001f9ec");
  ASSERT_GT(ids.size(), 2u);  // the vocab has no whole 🧬: it is cut into byte-level pieces
  std::vector<std::string> pieces;
  EXPECT_EQ(stream(tok, ids, false, &pieces), "\U0001f9ec\U0001f9ec");
  for (const std::string& p : pieces) EXPECT_TRUE(p.empty() || p == "\U0001f9ec" || p == "\U0001f9ec\U0001f9ec") << p;
  // Half a character decodes as U+FFFD, once.
  EXPECT_EQ(tok.decode(std::vector<int64_t>{ids[0]}), "\uFFFD");
}

TEST(Tokenizer, BadIdsAndTextAreValueErrors) {
  const Tokenizer tok = Tokenizer::from_file(kDir + "qwen2.json");
  const std::vector<int64_t> ids = {5, tok.vocab_size()};
  EXPECT_TRUE(throws_with<ValueError>([&] { tok.decode(ids); },
                                      {"decode", "ids[1]", std::to_string(tok.vocab_size())}));
  EXPECT_TRUE(throws_with<ValueError>([&] { tok.decode(std::vector<int64_t>{-1}); }, {"decode", "-1"}));
  StreamingDecoder stream_decoder(tok);
  EXPECT_TRUE(throws_with<ValueError>([&] { stream_decoder.push(1 << 30); }, {"StreamingDecoder.push"}));
  EXPECT_TRUE(throws_with<ValueError>([&] { tok.encode("bad \xff byte"); }, {"encode", "UTF-8"}));
}

// --- malformed files ---

json minimal() {
  return json::parse(R"({"version": "1.0", "added_tokens": [{"id": 3, "content": "<s>", "special": true}],
    "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})");
}

::testing::AssertionResult format_error(const json& doc, std::vector<std::string> fragments) {
  fragments.push_back("bad.json");
  return throws_with<FormatError>([&] { Tokenizer::from_json_text(doc.dump(), "bad.json"); }, fragments);
}

::testing::AssertionResult unsupported(const json& doc, std::vector<std::string> fragments) {
  fragments.push_back("bad.json");
  return throws_with<UnsupportedError>([&] { Tokenizer::from_json_text(doc.dump(), "bad.json"); }, fragments);
}

TEST(TokenizerJson, MinimalFileWorks) {
  const Tokenizer tok = Tokenizer::from_json_text(minimal().dump(), "ok.json");
  EXPECT_EQ(tok.encode("abab<s>a"), (std::vector<int64_t>{2, 2, 3, 0}));
  EXPECT_EQ(tok.vocab_size(), 4);
  EXPECT_EQ(tok.decode(std::vector<int64_t>{2, 3, 0}), "ab <s> a");  // no decoder: tokens joined by spaces
  EXPECT_EQ(stream(tok, {2, 3, 0}, false), "ab <s> a");
}

// Expected ids from tokenizers 0.23.3 on the same file.
TEST(TokenizerJson, AddedTokenStripAndSingleWord) {
  const json doc = json::parse(R"({"added_tokens": [
      {"id": 4, "content": "<s>", "special": true, "normalized": false},
      {"id": 5, "content": "<m>", "special": true, "lstrip": true, "rstrip": true, "normalized": false},
      {"id": 6, "content": "ba", "single_word": true, "normalized": false},
      {"id": 7, "content": "b_", "single_word": true, "normalized": false}],
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, " ": 3}, "merges": ["a b"]}})");
  const Tokenizer tok = Tokenizer::from_json_text(doc.dump(), "strip.json");
  using Ids = std::vector<int64_t>;
  EXPECT_EQ(tok.encode("a  <m>  b"), (Ids{0, 5, 1}));
  EXPECT_EQ(tok.encode("ab <m>b"), (Ids{2, 5, 1}));
  EXPECT_EQ(tok.encode("aba ba bab ba"), (Ids{2, 0, 3, 6, 3, 1, 2, 3, 6}));
  EXPECT_EQ(tok.encode("b<m>\u3000 a"), (Ids{1, 5, 0}));
  EXPECT_EQ(tok.encode("a<s>ab"), (Ids{0, 4, 2}));
  EXPECT_EQ(tok.encode("b_ ab_"), (Ids{7, 3, 2}));  // '_' is in no vocab and there is no unk: dropped
  EXPECT_EQ(tok.encode("<m><m>  <m>"), (Ids{5, 5, 5}));
}

TEST(TokenizerJson, MalformedFilesNameTheField) {
  EXPECT_TRUE(throws_with<FormatError>([] { Tokenizer::from_json_text("{\"model\": ", "bad.json"); },
                                       {"bad.json", "valid JSON"}));
  EXPECT_TRUE(throws_with<FormatError>([] { Tokenizer::from_file(kDir + "missing.json"); }, {"missing.json"}));
  json doc = minimal();
  doc.erase("model");
  EXPECT_TRUE(format_error(doc, {"'model'", "an object"}));
  doc = minimal();
  doc["model"]["vocab"] = json::array({"a", "b"});
  EXPECT_TRUE(format_error(doc, {"model.vocab"}));
  doc = minimal();
  doc["model"]["merges"] = {"a c"};
  EXPECT_TRUE(format_error(doc, {"model.merges[0]", "'c'"}));
  doc = minimal();
  doc["model"]["merges"] = {"b a"};  // "ba" is not in the vocab
  EXPECT_TRUE(format_error(doc, {"model.merges[0]", "'ba'"}));
  doc = minimal();
  doc["model"]["merges"] = {"a  b"};
  EXPECT_TRUE(format_error(doc, {"model.merges[0]"}));
  doc = minimal();
  doc["model"]["vocab"]["c"] = 1;
  EXPECT_TRUE(format_error(doc, {"model.vocab[\"", "an id not used before"}));
  doc = minimal();
  doc["model"]["vocab"]["c"] = -4;
  EXPECT_TRUE(format_error(doc, {"model.vocab[\"c\"]", "-4"}));
  doc = minimal();
  doc["added_tokens"].push_back({{"id", 3}, {"content", "</s>"}});
  EXPECT_TRUE(format_error(doc, {"added_tokens[1].id", "4, the id tokenizers assigns"}));
  doc = minimal();
  doc["added_tokens"].push_back({{"id", 7}, {"content", "b"}});  // in the vocab as 1
  EXPECT_TRUE(format_error(doc, {"added_tokens[1].id", "1, the id"}));
  doc = minimal();
  doc["added_tokens"].push_back({{"id", 4}, {"content", "<s>"}});
  EXPECT_TRUE(format_error(doc, {"added_tokens[1].content", "no other added token"}));
  doc = minimal();
  doc["model"]["byte_fallback"] = "yes";
  EXPECT_TRUE(format_error(doc, {"model.byte_fallback", "true or false"}));
  doc = minimal();
  doc["model"]["unk_token"] = "<unk>";
  EXPECT_TRUE(format_error(doc, {"model.unk_token"}));
  doc = minimal();
  doc["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  EXPECT_TRUE(format_error(doc, {"pre_tokenizer.pattern.Regex", "(unclosed"}));
  doc = minimal();
  doc["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Sideways"}};
  EXPECT_TRUE(format_error(doc, {"pre_tokenizer.behavior", "Sideways"}));
  doc = minimal();
  doc["post_processor"] = json::parse(R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<bos>"}},
      {"Sequence": {"id": "A"}}], "special_tokens": {}})");
  EXPECT_TRUE(format_error(doc, {"post_processor.single[0].SpecialToken.id", "<bos>"}));
  doc = minimal();
  doc["decoder"] = {{"type", "Strip"}, {"content", "ab"}, {"start", 1}, {"stop", 0}};
  EXPECT_TRUE(format_error(doc, {"decoder.content", "one character"}));
}

TEST(TokenizerJson, UnsupportedFeaturesNameTheField) {
  json doc = minimal();
  doc["model"]["type"] = "WordPiece";
  EXPECT_TRUE(unsupported(doc, {"model.type", "WordPiece"}));
  doc = minimal();
  doc["normalizer"] = {{"type", "Lowercase"}};
  EXPECT_TRUE(unsupported(doc, {"normalizer.type", "Lowercase"}));
  doc = minimal();
  doc["pre_tokenizer"] = json::parse(R"({"type": "Sequence", "pretokenizers": [{"type": "Digits"},
      {"type": "Whitespace"}]})");
  EXPECT_TRUE(unsupported(doc, {"pre_tokenizer.pretokenizers[1].type", "Whitespace"}));
  doc = minimal();
  doc["decoder"] = {{"type", "CTC"}};
  EXPECT_TRUE(unsupported(doc, {"decoder.type", "CTC"}));
  doc = minimal();
  doc["post_processor"] = {{"type", "BertProcessing"}};
  EXPECT_TRUE(unsupported(doc, {"post_processor.type"}));
  doc = minimal();
  doc["model"]["dropout"] = 0.1;
  EXPECT_TRUE(unsupported(doc, {"model.dropout"}));
  doc = minimal();
  doc["model"]["continuing_subword_prefix"] = "##";
  EXPECT_TRUE(unsupported(doc, {"model.continuing_subword_prefix"}));
}

}  // namespace
}  // namespace fourfold::model
