// UTF-8 handling, Unicode classes and normalization forms (utf8proc).
#include <utf8proc.h>

#include <cstdlib>

#include <fmt/format.h>

#include "fourfold/errors.h"
#include "model/tokenizer/tokenizer_parts.h"

namespace fourfold::model::tokenizer_detail {
namespace {

// Length of the well-formed sequence starting at s[i], or 0 with `consumed` = the maximal invalid subpart.
size_t utf8_sequence(std::string_view s, size_t i, size_t& consumed) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) len = 2;
  else if (b == 0xE0) len = 3, lo = 0xA0;
  else if (b == 0xED) len = 3, hi = 0x9F;
  else if (b >= 0xE1 && b <= 0xEF) len = 3;
  else if (b == 0xF0) len = 4, lo = 0x90;
  else if (b == 0xF4) len = 4, hi = 0x8F;
  else if (b >= 0xF1 && b <= 0xF3) len = 4;
  consumed = 1;
  if (len == 0) return 0;
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) return 0;
    const auto c = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return 0;
    consumed = k + 1;
  }
  return len;
}

}  // namespace

std::pair<size_t, size_t> first_invalid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t consumed = 0;
    const size_t len = utf8_sequence(s, i, consumed);
    if (len == 0) return {i, consumed};
    i += len;
  }
  return {std::string_view::npos, 0};
}

bool is_valid_utf8(std::string_view s) { return first_invalid_utf8(s).first == std::string_view::npos; }

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    size_t consumed = 0;
    const size_t len = utf8_sequence(bytes, i, consumed);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      i += consumed;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::pair<char32_t, size_t> next_code_point(std::string_view s, size_t i) {
  utf8proc_int32_t cp = 0;
  const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                                  static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
  if (n <= 0) return {0xFFFD, 1};
  return {static_cast<char32_t>(cp), static_cast<size_t>(n)};
}

void append_utf8(std::string& out, char32_t cp) {
  utf8proc_uint8_t buf[4];
  const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

bool is_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

bool is_numeric(char32_t cp) {
  const auto c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

bool is_word_char(char32_t cp) {
  const auto c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return cp == U'_' || (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) || is_numeric(cp);
}

std::string unicode_normalize(std::string_view s, const std::string& form) {
  int options = UTF8PROC_STABLE;
  if (form == "NFC") options |= UTF8PROC_COMPOSE;
  else if (form == "NFD") options |= UTF8PROC_DECOMPOSE;
  else if (form == "NFKC") options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
  else options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                              static_cast<utf8proc_ssize_t>(s.size()), &out, static_cast<utf8proc_option_t>(options));
  if (n < 0) fail<ValueError>("encode", "text", "valid UTF-8", utf8proc_errmsg(n));
  std::string result(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
  return result;
}

}  // namespace fourfold::model::tokenizer_detail
