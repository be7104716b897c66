// Decoders (ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip) as tokenizers' decode_chain, and the
// streaming decoder that emits only text no later id can change.
#include "fourfold/errors.h"
#include "model/tokenizer/tokenizer.h"
#include "model/tokenizer/tokenizer_parts.h"

#include <fmt/format.h>

namespace fourfold::model {
namespace tokenizer_detail {
namespace {

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

std::string byte_level(const std::vector<std::string>& tokens) {
  const auto& map = unicode_to_byte();
  std::string bytes;
  for (const std::string& t : tokens) {
    const size_t mark = bytes.size();
    for (size_t i = 0; i < t.size();) {
      const auto [cp, len] = next_code_point(t, i);
      const auto it = map.find(cp);
      if (it == map.end()) {  // not a byte stand-in (an added token's own text): its bytes as they are
        bytes.resize(mark);
        bytes += t;
        break;
      }
      bytes += static_cast<char>(it->second);
      i += len;
    }
  }
  return utf8_lossy(bytes);
}

std::vector<std::string> byte_fallback(std::vector<std::string> tokens) {
  std::vector<std::string> out;
  std::string run;
  size_t run_len = 0;
  auto flush = [&] {
    if (run_len == 0) return;
    if (is_valid_utf8(run)) out.push_back(run);
    else
      for (size_t k = 0; k < run_len; ++k) out.emplace_back(kReplacementChar);
    run.clear();
    run_len = 0;
  };
  for (std::string& t : tokens) {
    if (is_byte_token(t)) {
      run += static_cast<char>(std::stoi(t.substr(3, 2), nullptr, 16));
      ++run_len;
    } else {
      flush();
      out.push_back(std::move(t));
    }
  }
  flush();
  return out;
}

std::string strip(const std::string& token, char32_t content, size_t start, size_t stop) {
  std::vector<std::pair<size_t, size_t>> chars;  // (offset, length)
  for (size_t i = 0; i < token.size();) {
    const auto [cp, len] = next_code_point(token, i);
    chars.emplace_back(i, len);
    i += len;
  }
  auto is_content = [&](size_t k) { return next_code_point(token, chars[k].first).first == content; };
  size_t begin = 0, end = chars.size();
  while (begin < start && begin < end && is_content(begin)) ++begin;
  for (size_t k = 0; k < stop && end > begin && is_content(end - 1); ++k) --end;
  if (begin == end) return {};
  const size_t from = chars[begin].first;
  return token.substr(from, chars[end - 1].first + chars[end - 1].second - from);
}

}  // namespace

bool is_byte_token(std::string_view t) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  return t.size() == 6 && t.substr(0, 3) == "<0x" && t[5] == '>' && hex(t[3]) && hex(t[4]);
}

std::string decode_tokens(const Pipeline& p, const std::vector<std::string_view>& tokens, bool text_start) {
  if (!p.has_decoder) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0 || !text_start) out += ' ';
      out += tokens[i];
    }
    return out;
  }
  std::vector<std::string> chain(tokens.begin(), tokens.end());
  size_t input_bytes = 0;
  for (const std::string_view t : tokens) input_bytes += t.size();
  const GrowthBound bound(p.file, input_bytes, p.decoder_strings);
  bool fused = false;  // chain[0] is no longer one token but the text so far
  for (const Decoder& d : p.decoders) {
    switch (d.kind) {
      case Decoder::Kind::kByteLevel:
        chain = {byte_level(chain)};
        fused = true;
        break;
      case Decoder::Kind::kFuse: {
        std::string all;
        for (const std::string& t : chain) all += t;
        chain = {std::move(all)};
        fused = true;
        break;
      }
      case Decoder::Kind::kByteFallback:
        chain = byte_fallback(std::move(chain));
        break;
      case Decoder::Kind::kReplace: {
        size_t bytes = 0;
        for (const std::string& t : chain) bytes += t.size();
        for (std::string& t : chain) {
          const size_t before = t.size();
          t = replace_matches(*d.regex, t, d.text, bound, d.path);
          bytes = bytes - before + t.size();
          bound.check(d.path, bytes);
        }
        break;
      }
      case Decoder::Kind::kStrip:
        for (size_t i = 0; i < chain.size(); ++i)
          chain[i] = strip(chain[i], d.strip_content, (i == 0 && fused && !text_start) ? 0 : d.start, d.stop);
        break;
      case Decoder::Kind::kMetaspace:
        for (size_t i = 0; i < chain.size(); ++i) {
          const bool first = i == 0 && text_start && d.prepend_scheme != PrependScheme::kNever;
          std::string out;
          for (size_t at = 0; at < chain[i].size();) {
            // The loader refuses an empty replacement, which would match at `at` forever.
            if (!d.text.empty() && chain[i].compare(at, d.text.size(), d.text) == 0) {
              if (!first) out += ' ';
              at += d.text.size();
            } else {
              out += chain[i][at++];
            }
          }
          chain[i] = std::move(out);
        }
        break;
    }
  }
  std::string out;
  for (const std::string& t : chain) out += t;
  return out;
}

}  // namespace tokenizer_detail

using namespace tokenizer_detail;

StreamingDecoder::StreamingDecoder(const Tokenizer& tokenizer, bool skip_special_tokens)
    : pipeline_(tokenizer.pipeline_), skip_special_tokens_(skip_special_tokens) {}

namespace {

std::string window_text(const Pipeline& p, const std::vector<int64_t>& ids, bool text_start) {
  std::vector<std::string_view> tokens;
  tokens.reserve(ids.size());
  for (const int64_t id : ids) tokens.emplace_back(p.id_to_token[static_cast<size_t>(id)]);
  return decode_tokens(p, tokens, text_start);
}

}  // namespace

std::string StreamingDecoder::push(int64_t id) {
  const Pipeline& p = *pipeline_;
  const auto n = static_cast<int64_t>(p.id_to_token.size());
  if (id < 0 || id >= n)
    fail<ValueError>("StreamingDecoder.push", "id", fmt::format("an id below the vocab size {}", n),
                     std::to_string(id));
  const auto index = static_cast<size_t>(id);
  if (!p.has_token[index]) return {};
  if (skip_special_tokens_ && p.added_by_id.contains(id) && p.added[p.added_by_id.at(id)].special) return {};
  window_.push_back(id);
  // A byte run's text is known only when the run ends: one invalid byte turns all of it into U+FFFD.
  if (p.decoder_has_byte_fallback && is_byte_token(p.id_to_token[index])) return {};
  const std::string text = window_text(p, window_, at_text_start_);
  std::string_view stable = text;
  while (stable.ends_with(kReplacementChar)) stable.remove_suffix(kReplacementChar.size());  // maybe half a char
  for (size_t k = 0; k < p.trailing_strip && !stable.empty(); ++k) {
    size_t last = stable.size() - 1;
    while (last > 0 && (static_cast<unsigned char>(stable[last]) & 0xC0) == 0x80) --last;
    if (next_code_point(stable, last).first != p.trailing_strip_content) break;
    stable.remove_suffix(stable.size() - last);
  }
  if (stable.size() <= emitted_) return {};
  std::string piece(stable.substr(emitted_));
  emitted_ = stable.size();
  if (stable.size() == text.size() && !p.decoder_rewrites_across_tokens) {
    // Everything is out and the decoders restart cleanly here: later text no longer depends on this window.
    window_.clear();
    emitted_ = 0;
    at_text_start_ = false;
  }
  return piece;
}

std::string StreamingDecoder::finish() {
  std::string rest = window_text(*pipeline_, window_, at_text_start_).substr(emitted_);
  window_.clear();
  emitted_ = 0;
  at_text_start_ = true;
  return rest;
}

}  // namespace fourfold::model
