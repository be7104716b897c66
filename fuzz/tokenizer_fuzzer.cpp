// libFuzzer target: arbitrary bytes as tokenizer.json, and (when a built-in tokenizer loads) as text to encode and
// as ids to decode and stream. Only fourfold's own errors may come out; a decode must round-trip to valid UTF-8.
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "fourfold/errors.h"
#include "model/tokenizer.h"

namespace {

// A small byte-level BPE with a split regex, the shape of Qwen2's, so that text inputs reach every stage.
constexpr const char* kTokenizer = R"({"version": "1.0", "added_tokens": [{"id": 6, "content": "<|end|>",
  "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": {"type": "NFC"},
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex":
    "(?i:'s|'t)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
    "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false,
    "use_regex": false}]},
  "post_processor": null, "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "fuse_unk": false, "byte_fallback": false,
    "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3, "Ġab": 4, "c": 5}, "merges": [["a", "b"], ["Ġ", "ab"]]}})";

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    fourfold::model::Tokenizer::from_json_text(text, "fuzz/tokenizer.json");
  } catch (const fourfold::Error&) {
  }
  static const fourfold::model::Tokenizer tok = fourfold::model::Tokenizer::from_json_text(kTokenizer, "builtin");
  try {
    tok.encode(text);
  } catch (const fourfold::ValueError&) {   // text that is not UTF-8
  }
  std::vector<int64_t> ids;
  for (size_t i = 0; i < size; ++i) ids.push_back(data[i] % 8);   // 7 is past the vocab: a ValueError
  try {
    const std::string whole = tok.decode(ids);
    if (!valid_utf8(whole)) std::abort();
    fourfold::model::StreamingDecoder stream(tok);
    std::string joined;
    for (int64_t id : ids) {
      const std::string piece = stream.push(id);
      if (!valid_utf8(piece)) std::abort();
      joined += piece;
    }
    joined += stream.finish();
    if (joined != whole) std::abort();
  } catch (const fourfold::ValueError&) {
  }
  return 0;
}
