// The tokenizer's pipeline as tokenizer.json describes it, and the stages' entry points; internal to
// src/model/tokenizer_*.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fourfold::model::tokenizer_detail {

// --- UTF-8 and Unicode classes (tokenizer_unicode.cpp) ---
bool is_valid_utf8(std::string_view s);
// The offset of the first byte that starts no well-formed sequence and the length of the invalid bytes there
// (the maximal invalid subpart); {npos, 0} when all of `s` is UTF-8.
std::pair<size_t, size_t> first_invalid_utf8(std::string_view s);
// Rust's String::from_utf8_lossy: each maximal invalid subsequence becomes one U+FFFD.
std::string utf8_lossy(std::string_view bytes);
// The code point at s[i] (valid UTF-8 assumed) and its length in bytes.
std::pair<char32_t, size_t> next_code_point(std::string_view s, size_t i);
void append_utf8(std::string& out, char32_t cp);
bool is_white_space(char32_t cp);  // Unicode White_Space, as Rust's char::is_whitespace
bool is_numeric(char32_t cp);      // Nd, Nl, No, as Rust's char::is_numeric
bool is_word_char(char32_t cp);    // alphanumeric or '_'
std::string unicode_normalize(std::string_view s, const std::string& form);  // "NFC", "NFD", "NFKC", "NFKD"

// --- regexes and bounded rewriting (tokenizer_regex.cpp) ---

// PCRE2's limits for one search, fixed so that a pathological pattern fails the same way on every machine and
// its backtracking memory stays bounded. The match limit is PCRE2's default and Oniguruma's (HF's engine)
// retry limit; the depth limit counts the interpreter's backtracking frames, the heap limit their memory. JIT
// matching, which has its own 32 KiB stack, falls back to the interpreter when that stack runs out.
inline constexpr uint32_t kRegexMatchLimit = 10'000'000;
inline constexpr uint32_t kRegexDepthLimit = 1'000'000;
inline constexpr uint32_t kRegexHeapLimitKib = 64 * 1024;

// A PCRE2 pattern in Oniguruma's meaning (HF's regex engine); shared, immutable, usable from many threads.
class Regex {
 public:
  // literal: the pattern is a plain string (tokenizer.json's {"String": ...}). Throws FormatError naming the
  // file and the field on one PCRE2 does not compile.
  Regex(const std::string& pattern, bool literal, const std::string& file, const std::string& field);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // Non-empty, non-overlapping matches, left to right, as [begin, end) byte offsets; `text` is valid UTF-8.
  // A search PCRE2 gives up on (the limits above) is an UnsupportedError naming the file, the field, the
  // pattern and the offset, never taken for "no match", which would silently change the ids.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  void* code_;           // pcre2_code_8*
  void* match_context_;  // pcre2_match_context_8*, the limits
  std::string pattern_, file_, field_;
};

// Replace and Prepend normalizers, ByteLevel and Metaspace pre-tokenizers and Replace decoders lengthen the text,
// and stacked stages multiply it (thirty ByteLevel pre-tokenizers make a prompt 2^30 times longer), so a chain's
// output may be at most kMaxTextGrowth times its input plus the chain's own strings from the file: far above
// what real files do (NFKD's widest expansion is 11 times in bytes, GPT-2's byte map twice).
inline constexpr size_t kMaxTextGrowth = 64;
struct GrowthBound {
  const std::string& file;
  size_t input_bytes;
  size_t limit;
  GrowthBound(const std::string& file, size_t input_bytes, size_t own_strings);
  // UnsupportedError naming the file and the stage (its JSON path) when `bytes` pass the limit.
  void check(const std::string& stage, size_t bytes) const;
};
// `text` with every match of `regex` replaced by `content`; refused as GrowthBound::check does as soon as the
// result would pass the bound, before it is built.
std::string replace_matches(const Regex& regex, const std::string& text, const std::string& content,
                            const GrowthBound& bound, const std::string& stage);

// --- normalizers and pre-tokenizers (tokenizer_pre.cpp) ---
struct Normalizer {
  enum class Kind { kUnicode, kPrepend, kReplace } kind;
  std::string text;                     // unicode form, prepended text, or replacement
  std::shared_ptr<const Regex> regex;   // kReplace
  std::string path;                     // the JSON path, for errors
};
struct Pipeline;
std::string normalize(const Pipeline& p, std::string s);

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
enum class PrependScheme { kAlways, kFirst, kNever };

struct PreTokenizer {
  enum class Kind { kSplit, kByteLevel, kMetaspace, kDigits } kind;
  std::shared_ptr<const Regex> regex;   // kSplit; kByteLevel with use_regex (GPT-2's pattern)
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  bool add_prefix_space = false;        // kByteLevel
  std::string replacement;              // kMetaspace
  PrependScheme prepend_scheme = PrependScheme::kAlways;
  bool split = false;                   // kMetaspace
  bool individual_digits = false;       // kDigits
  std::string path;                     // the JSON path, for errors
};

// A piece of the input on its way to the model. at_start: it begins at offset 0 of the original text (what
// Metaspace's prepend_scheme "first" asks).
struct Piece {
  std::string text;
  bool at_start;
};
std::vector<Piece> pre_tokenize(const Pipeline& p, Piece piece);
const std::array<std::string, 256>& byte_to_unicode();  // GPT-2's printable stand-in for each byte
const std::unordered_map<char32_t, uint8_t>& unicode_to_byte();
std::string gpt2_split_pattern();

// --- the BPE model (tokenizer_bpe.cpp) ---
struct Bpe {
  std::unordered_map<std::string, int64_t> vocab;
  std::unordered_map<uint64_t, std::pair<int32_t, int64_t>> merges;  // (left id << 32 | right id) -> (rank, id)
  bool byte_fallback = false;
  bool fuse_unk = false;
  bool ignore_merges = false;
  int64_t unk_id = -1;
  std::array<int64_t, 256> byte_ids{};  // <0xNN> ids, -1 where the vocab lacks one
  void tokenize(std::string_view word, std::vector<int64_t>& out) const;
};

// --- decoders (tokenizer_decode.cpp) ---
struct Decoder {
  enum class Kind { kByteLevel, kMetaspace, kReplace, kByteFallback, kFuse, kStrip } kind;
  std::shared_ptr<const Regex> regex;  // kReplace
  std::string text;                    // kReplace: content; kMetaspace: replacement
  char32_t strip_content = U' ';       // kStrip
  size_t start = 0, stop = 0;          // kStrip
  PrependScheme prepend_scheme = PrependScheme::kAlways;  // kMetaspace
  std::string path;                    // the JSON path, for errors
};

struct AddedToken {
  int64_t id;
  std::string content;
  bool special = false, single_word = false, lstrip = false, rstrip = false, normalized = true;
  std::string match;  // what is looked for: content, or content normalized where `normalized`
};

struct Pipeline {
  std::string file;
  std::vector<AddedToken> added;
  std::unordered_map<int64_t, size_t> added_by_id;
  std::unordered_map<std::string, int64_t> added_by_content;
  // Indices into `added` by the first byte of `match`, longest first; [0] raw-text tokens, [1] normalized.
  std::array<std::array<std::vector<size_t>, 256>, 2> added_by_first_byte;
  std::vector<Normalizer> normalizers;
  std::vector<PreTokenizer> pre_tokenizers;
  // Bytes of the strings each chain inserts (Prepend, Replace content, Metaspace replacement), for growth_limit.
  size_t normalizer_strings = 0, pre_tokenizer_strings = 0, decoder_strings = 0;
  Bpe bpe;
  std::vector<std::string> id_to_token;  // model and added tokens; "" with has_token false for holes
  std::vector<bool> has_token;
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> templates;  // (before, after) $A, in order
  bool has_decoder = false;
  std::vector<Decoder> decoders;
  // Where streaming must hold back (see StreamingDecoder).
  bool decoder_has_byte_fallback = false;
  bool decoder_rewrites_across_tokens = false;  // a Replace after a fusing step: no clean restart points
  size_t trailing_strip = 0;
  char32_t trailing_strip_content = U' ';
};

std::shared_ptr<const Pipeline> parse_tokenizer_json(std::string_view text, const std::string& file);
// decode's tail: the decoder chain over the tokens' strings. text_start false: the tokens continue a text
// (Metaspace's first-token rule and a fused Strip's start do not apply).
std::string decode_tokens(const Pipeline& p, const std::vector<std::string_view>& tokens, bool text_start);
bool is_byte_token(std::string_view token);

}  // namespace fourfold::model::tokenizer_detail
