#include "model/formats/npy_header.h"

#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "fourfold/errors.h"

namespace fourfold::model {
namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
constexpr uint32_t kMaxHeaderBytes = 1u << 20;   // numpy's own limit is 10 KB for safety; real headers are ~100 bytes
constexpr size_t kMaxDims = 64;                  // numpy's NPY_MAXDIMS

// One pass over the dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }. Every step moves
// forward or fails, so the time is linear in the header's length and the stack depth constant.
class Literal {
 public:
  Literal(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  [[noreturn]] void bad(std::string_view field, std::string_view expected) const {
    const std::string_view rest = text_.substr(at_, 24);
    fail<FormatError>(file_, field, expected,
                      at_ >= text_.size() ? std::string("the end of the header")
                                          : fmt::format("'{}' at header byte {}", printable(rest), at_));
  }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void expect(char c, std::string_view field) {
    if (!take(c)) bad(field, fmt::format("'{}'", c));
  }
  // A quoted string without escapes (numpy writes none in these three keys and their values).
  std::string quoted(std::string_view field) {
    skip_space();
    if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"')) bad(field, "a quoted string");
    const char quote = text_[at_++];
    const size_t end = text_.find(quote, at_);
    if (end == std::string_view::npos) bad(field, "a closing quote");
    const std::string out(text_.substr(at_, end - at_));
    at_ = end + 1;
    return out;
  }
  std::optional<bool> boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{std::string_view("True"), true}, {std::string_view("False"), false}})
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return value;
      }
    return std::nullopt;
  }
  // (), (5,), (2, 3): non-negative decimal integers.
  Shape tuple(std::string_view field) {
    expect('(', field);
    Shape shape;
    while (!take(')')) {
      if (shape.size() == kMaxDims) bad(field, fmt::format("at most {} dimensions", kMaxDims));
      skip_space();
      const size_t start = at_;
      int64_t v = 0;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[at_] - '0', &v))
          bad(field, "sizes that fit in 64 bits");
        ++at_;
      }
      if (at_ == start) bad(field, "a tuple of non-negative integers");
      shape.push_back(v);
      if (!take(',')) {
        expect(')', field);
        break;
      }
    }
    return shape;
  }
  bool done() {
    skip_space();
    return at_ == text_.size();
  }

 private:
  static std::string printable(std::string_view s) {
    std::string out;
    for (const char c : s) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return out;
  }
  std::string_view text_;
  const std::string& file_;
  size_t at_ = 0;
};

// A value from the file quoted in a message: a 200 KB descr must not become a 200 KB error.
std::string quoted_excerpt(const std::string& value) {
  constexpr size_t kMax = 40;
  return "'" + (value.size() <= kMax ? value : value.substr(0, kMax) + fmt::format("...' ({} bytes)", value.size())) +
         (value.size() <= kMax ? "'" : "");
}

DType dtype_of(const std::string& descr, const std::string& file) {
  if (descr == "<f4") return DType::f32;
  if (descr == "<f8") return DType::f64;
  if (descr == "<i4") return DType::i32;
  if (descr == "<i8") return DType::i64;
  fail<FormatError>(file, "descr", "'<f4', '<f8', '<i4' or '<i8'", quoted_excerpt(descr));
}

uint32_t little_endian(std::string_view bytes, size_t at, int width) {
  uint32_t v = 0;
  for (int i = 0; i < width; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

}  // namespace

NpyHeader parse_npy_header(std::string_view bytes, const std::string& file) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic)
    fail<FormatError>(file, "magic", "\\x93NUMPY and a version (a .npy file)", "something else");
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) fail<FormatError>(file, "version", "1, 2 or 3", std::to_string(major));
  const int width = major == 1 ? 2 : 4;
  if (bytes.size() < 8u + width) fail<FormatError>(file, "header length", "present", "the file ends inside it");
  const uint32_t length = little_endian(bytes, 8, width);
  if (length > kMaxHeaderBytes)
    fail<FormatError>(file, "header length", fmt::format("at most {} bytes", kMaxHeaderBytes), std::to_string(length));
  const uint64_t begin = 8u + width;
  if (bytes.size() - begin < length)
    fail<FormatError>(file, "header", fmt::format("{} bytes", length), "the file ends inside it");

  Literal lit(bytes.substr(begin, length), file);
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<Shape> shape;
  lit.expect('{', "header");
  while (!lit.take('}')) {
    const std::string key = lit.quoted("header key");
    lit.expect(':', key);
    if (key == "descr" && !descr) {
      descr = lit.quoted("descr");
    } else if (key == "fortran_order" && !fortran) {
      fortran = lit.boolean();
      if (!fortran) lit.bad("fortran_order", "True or False");
    } else if (key == "shape" && !shape) {
      shape = lit.tuple("shape");
    } else {
      fail<FormatError>(file, "header key", "each of 'descr', 'fortran_order' and 'shape' once", quoted_excerpt(key));
    }
    if (!lit.take(',')) {
      lit.expect('}', "header");
      break;
    }
  }
  if (!lit.done()) lit.bad("header", "nothing after the dict but spaces and a newline");
  if (!descr || !fortran || !shape)
    fail<FormatError>(file, !descr ? "descr" : !fortran ? "fortran_order" : "shape", "present", "none (missing)");
  if (*fortran) fail<FormatError>(file, "fortran_order", "False (C order)", "True");

  NpyHeader h;
  h.dtype = dtype_of(*descr, file);
  h.shape = *shape;
  h.data_offset = begin + length;
  const int64_t numel = checked_product(h.shape, file, "shape");
  h.data_bytes = static_cast<uint64_t>(checked_mul(numel, static_cast<int64_t>(dtype_size(h.dtype)), file, "shape"));
  const uint64_t available = bytes.size() - h.data_offset;
  if (available != h.data_bytes)
    fail<FormatError>(file, "data", fmt::format("{} bytes (the shape's {} elements of {})", h.data_bytes, numel, *descr),
                      fmt::format("{} bytes", available));
  return h;
}

}  // namespace fourfold::model
