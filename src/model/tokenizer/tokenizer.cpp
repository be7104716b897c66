// encode's order of stages as in tokenizers: added tokens split out (raw text, then normalized text), each
// other piece normalized and pre-tokenized, the BPE model per pre-token, the post-processor's template.
#include "model/tokenizer/tokenizer.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/tokenizer/tokenizer_parts.h"

namespace fourfold::model {

using namespace tokenizer_detail;

namespace {

struct Segment {
  size_t begin, end;
  int64_t id;  // the added token matched, or -1 for text still to tokenize
};

// Added tokens of one kind (normalized or not) found in `text`, leftmost-longest as tokenizers'
// aho-corasick search, with single_word, lstrip and rstrip applied as there.
std::vector<Segment> split_added(const Pipeline& p, std::string_view text, bool normalized) {
  std::vector<Segment> out;
  size_t start_offset = 0;
  for (size_t i = 0; i < text.size();) {
    const AddedToken* best = nullptr;
    for (const size_t k : p.added_by_first_byte[normalized][static_cast<unsigned char>(text[i])])
      if (text.substr(i, p.added[k].match.size()) == p.added[k].match) {
        best = &p.added[k];
        break;
      }
    if (best == nullptr) {
      i += next_code_point(text, i).second;
      continue;
    }
    size_t start = i, stop = i + best->match.size();
    i = stop;
    if (best->single_word) {
      bool word_before = false, word_after = false;
      if (start > 0) {
        size_t k = start - 1;
        while (k > 0 && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80) --k;
        word_before = is_word_char(next_code_point(text, k).first);
      }
      if (stop < text.size()) word_after = is_word_char(next_code_point(text, stop).first);
      if (word_before || word_after) continue;
    }
    if (best->lstrip) {
      size_t new_start = start;
      while (new_start > start_offset) {
        size_t k = new_start - 1;
        while (k > 0 && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80) --k;
        if (!is_white_space(next_code_point(text, k).first)) break;
        new_start = k;
      }
      start = new_start;
    }
    if (best->rstrip) {
      while (stop < text.size()) {
        const auto [cp, len] = next_code_point(text, stop);
        if (!is_white_space(cp)) break;
        stop += len;
      }
      i = stop;
    }
    if (start_offset < start) out.push_back({start_offset, start, -1});
    out.push_back({start, stop, best->id});
    start_offset = stop;
  }
  if (start_offset < text.size()) out.push_back({start_offset, text.size(), -1});
  return out;
}

}  // namespace

Tokenizer::Tokenizer(std::shared_ptr<const Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}

Tokenizer Tokenizer::from_file(const std::filesystem::path& tokenizer_json) {
  return from_json_text(read_regular_file(tokenizer_json, uint64_t(1) << 30), tokenizer_json.string());
}

Tokenizer Tokenizer::from_json_text(std::string_view text, const std::string& file_name) {
  return Tokenizer(parse_tokenizer_json(text, file_name));
}

std::vector<int64_t> Tokenizer::encode(std::string_view text, bool add_special_tokens, std::string_view source) const {
  const Pipeline& p = *pipeline_;
  if (const auto [offset, length] = first_invalid_utf8(text); offset != std::string_view::npos) {
    std::string bytes;
    for (size_t k = 0; k < length; ++k)
      bytes += fmt::format("{}0x{:02X}", k == 0 ? "" : " ", static_cast<unsigned char>(text[offset + k]));
    fail<ValueError>("encode", source, "valid UTF-8",
                     fmt::format("{} at byte offset {} (of {}), not a UTF-8 character", bytes, offset, text.size()));
  }
  std::vector<int64_t> ids;
  for (const Segment& raw : split_added(p, text, false)) {
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      continue;
    }
    const std::string normalized = normalize(p, std::string(text.substr(raw.begin, raw.end - raw.begin)));
    for (const Segment& seg : split_added(p, normalized, true)) {
      if (seg.id >= 0) {
        ids.push_back(seg.id);
        continue;
      }
      const Piece piece{normalized.substr(seg.begin, seg.end - seg.begin), raw.begin == 0 && seg.begin == 0};
      for (const Piece& word : pre_tokenize(p, piece)) p.bpe.tokenize(word.text, ids);
    }
  }
  if (add_special_tokens)
    for (const auto& [before, after] : p.templates) {
      ids.insert(ids.begin(), before.begin(), before.end());
      ids.insert(ids.end(), after.begin(), after.end());
    }
  return ids;
}

std::string Tokenizer::decode(std::span<const int64_t> ids, bool skip_special_tokens) const {
  const Pipeline& p = *pipeline_;
  std::vector<std::string_view> tokens;
  tokens.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id >= vocab_size())
      fail<ValueError>("decode", fmt::format("ids[{}]", i), fmt::format("an id below the vocab size {}", vocab_size()),
                       std::to_string(id));
    if (!p.has_token[static_cast<size_t>(id)]) continue;  // a hole in the ids: nothing, as in tokenizers
    if (skip_special_tokens && is_special(id)) continue;
    tokens.emplace_back(p.id_to_token[static_cast<size_t>(id)]);
  }
  return decode_tokens(p, tokens, true);
}

std::optional<int64_t> Tokenizer::token_to_id(std::string_view token) const {
  const std::string key(token);
  if (const auto it = pipeline_->added_by_content.find(key); it != pipeline_->added_by_content.end()) return it->second;
  if (const auto it = pipeline_->bpe.vocab.find(key); it != pipeline_->bpe.vocab.end()) return it->second;
  return std::nullopt;
}

int64_t Tokenizer::vocab_size() const { return static_cast<int64_t>(pipeline_->id_to_token.size()); }

bool Tokenizer::is_special(int64_t id) const {
  const auto it = pipeline_->added_by_id.find(id);
  return it != pipeline_->added_by_id.end() && pipeline_->added[it->second].special;
}

}  // namespace fourfold::model
