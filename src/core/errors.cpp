// Message formatting shared by every error raised in fourfold.
#include "fourfold/errors.h"

#include <fmt/format.h>

namespace fourfold {

std::string describe_error(std::string_view where, std::string_view name, std::string_view expected,
                           std::string_view found, std::string_view kind) {
  return fmt::format("{}: {} '{}': expected {}, found {}", where, kind, name, expected, found);
}

}  // namespace fourfold
