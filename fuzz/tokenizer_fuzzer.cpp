// libFuzzer target: tokenizer.json and text through the whole pipeline. An input that starts with '{' is a
// tokenizer.json, then (after a NUL byte, which JSON text cannot hold) the text it encodes; any other input's
// first byte picks one of the built-in tokenizers below, which between them hold every normalizer,
// pre-tokenizer and decoder fourfold reads, and the rest is the text. The text's bytes are also ids to decode
// and to stream. Only fourfold's own errors may come out; a decode must be valid UTF-8 and streaming must join
// to it. A hang is caught by libFuzzer's -timeout (scripts/fuzz.sh); the ids streamed per input are capped so
// that one long input cannot get near it on a pipeline whose streaming window never restarts.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fourfold/errors.h"
#include "model/tokenizer/tokenizer.h"

namespace {

using fourfold::model::StreamingDecoder;
using fourfold::model::Tokenizer;
using nlohmann::json;

constexpr size_t kMaxIds = 2048;

// A BPE model over `tokens`, numbered in order, with "left right" merges.
json bpe(const std::vector<std::string>& tokens, const std::vector<std::string>& merges) {
  json vocab = json::object();
  for (size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = i;
  return {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}};
}

json split(const std::string& kind, const std::string& pattern, const std::string& behavior, bool invert) {
  return {{"type", "Split"}, {"pattern", {{kind, pattern}}}, {"behavior", behavior}, {"invert", invert}};
}

json replace(const std::string& kind, const std::string& pattern, const std::string& content) {
  return {{"type", "Replace"}, {"pattern", {{kind, pattern}}}, {"content", content}};
}

json strip(const std::string& content, int start, int stop) {
  return {{"type", "Strip"}, {"content", content}, {"start", start}, {"stop", stop}};
}

// Qwen2's shape: NFC, a split regex with look-ahead, byte-level BPE and decoder.
json byte_level() {
  json doc;
  doc["added_tokens"] = {{{"id", 6}, {"content", "<|end|>"}, {"special", true}, {"normalized", false}}};
  doc["normalizer"] = {{"type", "NFC"}};
  doc["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {split("Regex", R"((?i:'s|'t)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
              "Isolated", false),
        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  doc["decoder"] = {{"type", "ByteLevel"}};
  doc["model"] = bpe({"a", "b", "ab", "\u0120", "\u0120ab", "c"}, {"a b", "\u0120 ab"});
  return doc;
}

// Llama 2's shape: Prepend and Replace normalizers, byte fallback with a fused unk, BOS template, and the
// Replace / ByteFallback / Fuse / Strip decoder chain.
json sentencepiece() {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    tokens.emplace_back(name);
  }
  for (const char* t : {"\u2581", "a", "b", "\u2581a", "ab", "\u2581ab", "1"}) tokens.emplace_back(t);
  json doc;
  doc["added_tokens"] = json::array();
  for (int id = 0; id < 3; ++id)
    doc["added_tokens"].push_back({{"id", id}, {"content", tokens[id]}, {"special", true}, {"normalized", false}});
  doc["normalizer"] = {{"type", "Sequence"},
                       {"normalizers", {{{"type", "Prepend"}, {"prepend", "\u2581"}}, replace("String", " ", "\u2581")}}};
  doc["post_processor"] = json::parse(R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>",
      "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [1],
      "tokens": ["<s>"]}}})");
  doc["decoder"] = {{"type", "Sequence"},
                    {"decoders",
                     {replace("String", "\u2581", " "), {{"type", "ByteFallback"}}, {{"type", "Fuse"}}, strip(" ", 1, 0)}}};
  doc["model"] = bpe(tokens, {"\u2581 a", "a b", "\u2581a b"});
  doc["model"]["byte_fallback"] = true;
  doc["model"]["fuse_unk"] = true;
  doc["model"]["unk_token"] = "<unk>";
  return doc;
}

// Metaspace both ways, Digits, a String split, a regex Replace after NFKC, a trailing Strip, and added tokens
// that strip around them and are matched after normalization.
json metaspace() {
  json doc;
  doc["added_tokens"] = {{{"id", 9}, {"content", "<m>"}, {"lstrip", true}, {"rstrip", true}, {"normalized", true}},
                         {{"id", 10}, {"content", "ba"}, {"single_word", true}, {"normalized", false}}};
  doc["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFKC"}}, replace("Regex", R"(\s+)", " ")}}};
  doc["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers",
                           {{{"type", "Digits"}, {"individual_digits", true}}, split("String", "-", "Removed", false),
                            {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "first"},
                             {"split", true}}}}};
  doc["decoder"] = {{"type", "Sequence"},
                    {"decoders",
                     {{{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "first"}},
                      strip(" ", 0, 2)}}};
  doc["model"] = bpe({"\u2581", "a", "b", "c", "1", "2", "\u2581a", "ab", "\u2581ab"}, {"\u2581 a", "a b", "\u2581a b"});
  return doc;
}

// Split's other behaviours and invert, ByteLevel with its own regex and prefix space, and a Replace after the
// byte-level decoder has fused the tokens (streaming then has no clean restart points).
json split_behaviours() {
  json doc;
  doc["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers",
                           {split("Regex", R"(\p{P})", "MergedWithPrevious", false),
                            split("Regex", "[aeiou]+", "MergedWithNext", true), split("Regex", R"(\d)", "Contiguous", false),
                            {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}}}}};
  doc["decoder"] = {{"type", "Sequence"},
                    {"decoders", {{{"type", "ByteLevel"}}, replace("Regex", "a+", "A"), strip("A", 0, 1)}}};
  doc["model"] = bpe({"a", "b", "e", "\u0120", "\u0120a", "ab", ".", "1"}, {"\u0120 a", "a b"});
  return doc;
}

const std::vector<Tokenizer>& builtins() {
  static const std::vector<Tokenizer> all = [] {
    std::vector<Tokenizer> t;
    for (const json& doc : {byte_level(), sentencepiece(), metaspace(), split_behaviours()})
      t.push_back(Tokenizer::from_json_text(doc.dump(), "builtin/tokenizer.json"));
    return t;
  }();
  return all;
}

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += n;
  }
  return true;
}

void decode_and_stream(const Tokenizer& tok, const std::vector<int64_t>& ids, bool skip_special) {
  try {
    const std::string whole = tok.decode(ids, skip_special);
    if (!valid_utf8(whole)) std::abort();
    StreamingDecoder stream(tok, skip_special);
    std::string joined;
    for (const int64_t id : ids) {
      const std::string piece = stream.push(id);
      if (!valid_utf8(piece)) std::abort();
      joined += piece;
    }
    joined += stream.finish();
    if (joined != whole) std::abort();
  } catch (const fourfold::Error&) {  // an id past the vocab; a decoder chain that grows past its bound
  }
}

void exercise(const Tokenizer& tok, std::string_view text) {
  try {
    tok.encode(text);
    tok.encode(text, false, "fuzz text");
  } catch (const fourfold::Error&) {  // text that is not UTF-8; a regex or growth limit
  }
  // Each byte an id, one in 256 (or in vocab_size + 1 for a small vocab) past the vocab.
  const int64_t span = std::min<int64_t>(tok.vocab_size() + 1, 256);
  std::vector<int64_t> ids;
  for (size_t i = 0; i < text.size() && ids.size() < kMaxIds; ++i)
    ids.push_back(static_cast<unsigned char>(text[i]) % span);
  decode_and_stream(tok, ids, false);
  decode_and_stream(tok, ids, true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input[0] != '{') {
    const auto& all = builtins();
    exercise(all[static_cast<unsigned char>(input[0]) % all.size()], input.substr(1));
    return 0;
  }
  const size_t nul = input.find('\0');
  try {
    const Tokenizer tok = Tokenizer::from_json_text(input.substr(0, nul), "fuzz/tokenizer.json");
    if (nul != std::string_view::npos) exercise(tok, input.substr(nul + 1));
  } catch (const fourfold::Error&) {
  }
  return 0;
}
