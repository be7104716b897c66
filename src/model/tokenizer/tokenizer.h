// A Hugging Face tokenizer.json tokenizer: the BPE family (GPT-2 byte level, Qwen2, Llama 3, SentencePiece
// BPE as Llama 2 and Mistral ship it), with the ids `tokenizers` gives for the same file, bit for bit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fourfold::model {

namespace tokenizer_detail {
struct Pipeline;
}

class Tokenizer {
 public:
  // Every malformed or unsupported piece is refused here, not at first use: FormatError (or UnsupportedError
  // for a valid file using a feature fourfold lacks) naming the file and the JSON path of the field.
  static Tokenizer from_file(const std::filesystem::path& tokenizer_json);
  static Tokenizer from_json_text(std::string_view text, const std::string& file_name);

  // add_special_tokens applies the post-processor's template (Llama's BOS), as transformers' tokenizer(text)
  // does by default. Added tokens in the text (<|im_start|>) always become their ids, as there. The text must
  // be valid UTF-8: the split regexes are defined on characters. Otherwise a ValueError
  // "encode: argument '<source>': expected valid UTF-8, found 0xFF at byte offset 4 ...", so a caller names
  // where the text came from (an option, a file) as `source`. A split regex PCRE2 cannot search within its
  // limits, or a pipeline that lengthens the text past kMaxTextGrowth times, is an UnsupportedError naming the
  // tokenizer file and the JSON path of the stage.
  std::vector<int64_t> encode(std::string_view text, bool add_special_tokens = true,
                              std::string_view source = "text") const;
  // Bytes that do not form UTF-8 (a byte token cut from its character) come out as U+FFFD, as in
  // `tokenizers`, so the result is always valid UTF-8. An id outside [0, vocab_size()) is a ValueError
  // rather than skipped as `tokenizers` does: a sampler that produced it has a bug worth seeing. Replace
  // decoders that lengthen the text past kMaxTextGrowth times, or a pattern PCRE2 cannot search within its
  // limits, are an UnsupportedError naming the tokenizer file and the decoder's JSON path.
  std::string decode(std::span<const int64_t> ids, bool skip_special_tokens = false) const;

  std::optional<int64_t> token_to_id(std::string_view token) const;
  // The model's embedding rows must cover this: largest id + 1, added tokens included.
  int64_t vocab_size() const;
  bool is_special(int64_t id) const;

 private:
  friend class StreamingDecoder;
  explicit Tokenizer(std::shared_ptr<const tokenizer_detail::Pipeline> pipeline);
  // Shared and immutable: copies are cheap and encode/decode may run on many threads at once.
  std::shared_ptr<const tokenizer_detail::Pipeline> pipeline_;
};

// Text for a generation loop, one id at a time. A piece is emitted only once no later id can change it: never
// half a UTF-8 character, never a byte-fallback run that might still turn out invalid (then every byte of it
// becomes U+FFFD), never a trailing character a Strip decoder might still remove. So the pieces joined, then
// finish(), are exactly decode(all ids), and each piece is valid UTF-8. Work per push is bounded by the text
// since the last point where the decoders restart cleanly, not by the whole generation.
class StreamingDecoder {
 public:
  explicit StreamingDecoder(const Tokenizer& tokenizer, bool skip_special_tokens = false);
  std::string push(int64_t id);
  // The held-back rest; the decoder then starts a new text.
  std::string finish();

 private:
  std::shared_ptr<const tokenizer_detail::Pipeline> pipeline_;
  bool skip_special_tokens_;
  std::vector<int64_t> window_;  // ids since the last clean restart point
  bool at_text_start_ = true;    // the window begins the text (Strip and Metaspace treat the start apart)
  size_t emitted_ = 0;           // bytes of the window's text already returned
};

}  // namespace fourfold::model
