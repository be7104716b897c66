// Normalizers and pre-tokenizers with the semantics of Hugging Face tokenizers: Split's five behaviours,
// ByteLevel's byte-to-unicode map, Metaspace's prepend schemes, Digits.
#include "model/tokenizer/tokenizer_parts.h"

namespace fourfold::model::tokenizer_detail {
namespace {

using Span = std::pair<std::pair<size_t, size_t>, bool>;  // ([begin, end), is_match)

// The text cut into matches and the gaps between them, as tokenizers' Pattern::find_matches.
std::vector<Span> with_gaps(const std::vector<std::pair<size_t, size_t>>& matches, size_t size) {
  std::vector<Span> spans;
  size_t prev = 0;
  for (const auto& [b, e] : matches) {
    if (prev != b) spans.push_back({{prev, b}, false});
    spans.push_back({{b, e}, true});
    prev = e;
  }
  if (prev != size) spans.push_back({{prev, size}, false});
  return spans;
}

std::vector<Span> apply_behavior(std::vector<Span> spans, SplitBehavior behavior) {
  std::vector<Span> out;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      return spans;
    case SplitBehavior::kRemoved:
      for (const Span& s : spans)
        if (!s.second) out.push_back(s);
      return out;
    case SplitBehavior::kMergedWithPrevious:
      for (const Span& s : spans) {
        if (s.second && !previous_match && !out.empty()) out.back().first.second = s.first.second;
        else out.push_back(s);
        previous_match = s.second;
      }
      return out;
    case SplitBehavior::kMergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->second && !previous_match && !out.empty()) out.back().first.first = it->first.first;
        else out.push_back(*it);
        previous_match = it->second;
      }
      return {out.rbegin(), out.rend()};
    case SplitBehavior::kContiguous:
      for (const Span& s : spans) {
        if (s.second == previous_match && !out.empty()) out.back().first.second = s.first.second;
        else out.push_back(s);
        previous_match = s.second;
      }
      return out;
  }
  return spans;
}

void split_piece(const Piece& piece, std::vector<Span> spans, SplitBehavior behavior, bool invert,
                 std::vector<Piece>& out) {
  if (invert)
    for (Span& s : spans) s.second = !s.second;
  for (const Span& s : apply_behavior(std::move(spans), behavior)) {
    const auto [b, e] = s.first;
    if (e > b) out.push_back({piece.text.substr(b, e - b), piece.at_start && b == 0});
  }
}

// Each numeric character is a match of its own, as tokenizers' char-predicate pattern.
std::vector<std::pair<size_t, size_t>> numeric_chars(std::string_view text) {
  std::vector<std::pair<size_t, size_t>> matches;
  for (size_t i = 0; i < text.size();) {
    const auto [cp, len] = next_code_point(text, i);
    if (is_numeric(cp)) matches.emplace_back(i, i + len);
    i += len;
  }
  return matches;
}

std::string replace_all(const std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;  // an empty `from` is found everywhere without the search moving on
  std::string out;
  size_t at = 0;
  for (size_t hit; (hit = text.find(from, at)) != std::string::npos; at = hit + from.size()) {
    out.append(text, at, hit - at);
    out += to;
  }
  out.append(text, at, std::string::npos);
  return out;
}

void apply(const PreTokenizer& pt, const Piece& piece, std::vector<Piece>& out) {
  switch (pt.kind) {
    case PreTokenizer::Kind::kSplit:
      split_piece(piece, with_gaps(pt.regex->find_all(piece.text), piece.text.size()), pt.behavior, pt.invert, out);
      return;
    case PreTokenizer::Kind::kDigits:
      split_piece(piece, with_gaps(numeric_chars(piece.text), piece.text.size()),
                  pt.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous, false, out);
      return;
    case PreTokenizer::Kind::kByteLevel: {
      Piece p = piece;
      if (pt.add_prefix_space && p.text.rfind(' ', 0) != 0) p.text = " " + p.text;   // insert(0) trips a GCC 12 -Wrestrict false positive
      std::vector<Piece> parts;
      if (pt.regex) split_piece(p, with_gaps(pt.regex->find_all(p.text), p.text.size()), SplitBehavior::kIsolated,
                                false, parts);
      else parts.push_back(std::move(p));
      const auto& map = byte_to_unicode();
      for (Piece& part : parts) {
        std::string mapped;
        mapped.reserve(part.text.size() * 2);
        for (const char c : part.text) mapped += map[static_cast<unsigned char>(c)];
        out.push_back({std::move(mapped), part.at_start});
      }
      return;
    }
    case PreTokenizer::Kind::kMetaspace: {
      Piece p{replace_all(piece.text, " ", pt.replacement), piece.at_start};
      const bool prepend = pt.prepend_scheme == PrependScheme::kAlways ||
                           (pt.prepend_scheme == PrependScheme::kFirst && piece.at_start);
      if (prepend && p.text.rfind(pt.replacement, 0) != 0) p.text.insert(0, pt.replacement);
      if (!pt.split) {
        if (!p.text.empty()) out.push_back(std::move(p));
        return;
      }
      // The loader refuses an empty replacement; were one to get here, every position would match it
      // without the search ever moving on.
      std::vector<std::pair<size_t, size_t>> hits;
      for (size_t at = 0; !pt.replacement.empty() && (at = p.text.find(pt.replacement, at)) != std::string::npos;
           at += pt.replacement.size())
        hits.emplace_back(at, at + pt.replacement.size());
      split_piece(p, with_gaps(hits, p.text.size()), SplitBehavior::kMergedWithNext, false, out);
      return;
    }
  }
}

}  // namespace

std::string normalize(const Pipeline& p, std::string s) {
  const GrowthBound bound(p.file, s.size(), p.normalizer_strings);
  for (const Normalizer& n : p.normalizers) {
    switch (n.kind) {
      case Normalizer::Kind::kUnicode:
        s = unicode_normalize(s, n.text);
        break;
      case Normalizer::Kind::kPrepend:
        if (!s.empty()) s.insert(0, n.text);
        break;
      case Normalizer::Kind::kReplace:
        s = replace_matches(*n.regex, s, n.text, bound, n.path);
        break;
    }
    bound.check(n.path, s.size());
  }
  return s;
}

std::vector<Piece> pre_tokenize(const Pipeline& p, Piece piece) {
  const GrowthBound bound(p.file, piece.text.size(), p.pre_tokenizer_strings);
  std::vector<Piece> pieces;
  if (!piece.text.empty()) pieces.push_back(std::move(piece));
  for (const PreTokenizer& pt : p.pre_tokenizers) {
    std::vector<Piece> next;
    size_t bytes = 0;
    for (const Piece& one : pieces) {
      const size_t first = next.size();
      apply(pt, one, next);
      for (size_t k = first; k < next.size(); ++k) bytes += next[k].text.size();
      bound.check(pt.path, bytes);
    }
    pieces = std::move(next);
  }
  return pieces;
}

const std::array<std::string, 256>& byte_to_unicode() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      append_utf8(t[b], printable ? static_cast<char32_t>(b) : next++);
    }
    return t;
  }();
  return table;
}

const std::unordered_map<char32_t, uint8_t>& unicode_to_byte() {
  static const std::unordered_map<char32_t, uint8_t> table = [] {
    std::unordered_map<char32_t, uint8_t> t;
    for (int b = 0; b < 256; ++b) t[next_code_point(byte_to_unicode()[b], 0).first] = static_cast<uint8_t>(b);
    return t;
  }();
  return table;
}

std::string gpt2_split_pattern() {
  return R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
}

}  // namespace fourfold::model::tokenizer_detail
