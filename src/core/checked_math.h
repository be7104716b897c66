// Arithmetic on sizes that come from files and command lines (a config's dimensions, a header's shape, a records
// file's byte counts): an overflow is a FormatError naming where and what, never a wrapped value (UBSan's abort in
// the sanitizer build, a silently wrong size in release).
#pragma once

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "fourfold/errors.h"

namespace fourfold {

inline int64_t checked_mul(int64_t a, int64_t b, std::string_view where, std::string_view what) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    fail<FormatError>(where, what, "sizes whose product fits in 64 bits", fmt::format("{} x {}", a, b));
  return out;
}

inline int64_t checked_add(int64_t a, int64_t b, std::string_view where, std::string_view what) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out))
    fail<FormatError>(where, what, "sizes whose sum fits in 64 bits", fmt::format("{} + {}", a, b));
  return out;
}

// The product of every size in `sizes`.
template <class Sizes>
int64_t checked_product(const Sizes& sizes, std::string_view where, std::string_view what) {
  int64_t out = 1;
  for (const auto s : sizes) out = checked_mul(out, static_cast<int64_t>(s), where, what);
  return out;
}

}  // namespace fourfold
