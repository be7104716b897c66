// The PCRE2 regex standing in for the Oniguruma regexes of Hugging Face tokenizers, searched within fixed limits,
// and the bound on how much a chain of stages may lengthen a text.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>
#include <new>

#include <fmt/format.h>

#include "fourfold/errors.h"
#include "model/tokenizer/tokenizer_parts.h"

namespace fourfold::model::tokenizer_detail {
namespace {

// A pattern as an error message shows it: a fuzzed one can be megabytes long. Cut at a character boundary.
std::string excerpt(std::string_view s) {
  if (s.size() <= 80) return std::string(s);
  size_t end = 77;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return std::string(s.substr(0, end)) + "...";
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR message[256];
  pcre2_get_error_message(code, message, sizeof message);
  return reinterpret_cast<const char*>(message);
}

}  // namespace

Regex::Regex(const std::string& pattern, bool literal, const std::string& file, const std::string& field)
    : pattern_(pattern), file_(file), field_(field) {
  // Oniguruma's \s (HF's engine) is Unicode White_Space; PCRE2's under UCP is Z plus \h and \v, the same set
  // (U+0085 included, U+001C-001F and U+180E not), so patterns pass through unchanged.
  int error = 0;
  PCRE2_SIZE offset = 0;
  const uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);  // LITERAL refuses UCP
  auto* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &error,
                             &offset, nullptr);
  if (code == nullptr)
    fail<FormatError>(file, field, "a regex PCRE2 compiles",
                      fmt::format("'{}' ({} at offset {})", excerpt(pattern), pcre2_message(error), offset));
  auto* context = pcre2_match_context_create(nullptr);
  if (context == nullptr) {
    pcre2_code_free(code);
    throw std::bad_alloc();
  }
  pcre2_set_match_limit(context, kRegexMatchLimit);
  pcre2_set_depth_limit(context, kRegexDepthLimit);
  pcre2_set_heap_limit(context, kRegexHeapLimitKib);
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // a speed-up only: matching works without it
  code_ = code;
  match_context_ = context;
}

Regex::~Regex() {
  pcre2_match_context_free(static_cast<pcre2_match_context*>(match_context_));
  pcre2_code_free(static_cast<pcre2_code*>(code_));
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view text) const {
  auto* code = static_cast<pcre2_code*>(code_);
  auto* context = static_cast<pcre2_match_context*>(match_context_);
  const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code, nullptr), &pcre2_match_data_free);
  if (!data) throw std::bad_alloc();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::vector<std::pair<size_t, size_t>> matches;
  size_t at = 0;
  while (at <= text.size()) {
    int rc = pcre2_match(code, subject, text.size(), at, PCRE2_NO_UTF_CHECK, data.get(), context);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  // the interpreter keeps its frames on the (limited) heap instead
      rc = pcre2_match(code, subject, text.size(), at, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, data.get(), context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0)
      fail<UnsupportedError>(
          file_, field_,
          fmt::format("a pattern PCRE2 can search within its limits (match {}, depth {}, heap {} KiB)",
                      kRegexMatchLimit, kRegexDepthLimit, kRegexHeapLimitKib),
          fmt::format("'{}': {}, searching from byte {} of a {}-byte piece of text", excerpt(pattern_),
                      pcre2_message(rc), at, text.size()));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.get());
    const size_t begin = ov[0], end = ov[1];
    if (end > begin) matches.emplace_back(begin, end);
    if (end > at) {
      at = end;
    } else {  // an empty match: step over one character, so every search moves on
      if (at >= text.size()) break;
      at += next_code_point(text, at).second;
    }
  }
  return matches;
}

GrowthBound::GrowthBound(const std::string& file, size_t input_bytes, size_t own_strings)
    : file(file), input_bytes(input_bytes), limit(kMaxTextGrowth * (input_bytes + own_strings)) {}

void GrowthBound::check(const std::string& stage, size_t bytes) const {
  if (bytes > limit)
    fail<UnsupportedError>(file, stage,
                           fmt::format("a text of at most {} bytes ({} times the chain's {}-byte input and the "
                                       "file's strings)",
                                       limit, kMaxTextGrowth, input_bytes),
                           fmt::format("at least {} bytes", bytes));
}

std::string replace_matches(const Regex& regex, const std::string& text, const std::string& content,
                            const GrowthBound& bound, const std::string& stage) {
  std::string out;
  size_t prev = 0;
  for (const auto& [b, e] : regex.find_all(text)) {
    bound.check(stage, out.size() + (b - prev) + content.size() + (text.size() - e));
    out.append(text, prev, b - prev);
    out += content;
    prev = e;
  }
  out.append(text, prev, std::string::npos);
  return out;
}

}  // namespace fourfold::model::tokenizer_detail
