// Message formatting shared by every error raised in fourfold.
#include "fourfold/errors.h"

#include <fmt/format.h>

namespace fourfold {

std::string describe_error(std::string_view where, std::string_view argument, std::string_view expected,
                           std::string_view found) {
  return fmt::format("{}: argument '{}': expected {}, found {}", where, argument, expected, found);
}

std::string describe_field_error(std::string_view file, std::string_view field, std::string_view expected,
                                 std::string_view found) {
  return fmt::format("{}: field '{}': expected {}, found {}", file, field, expected, found);
}

}  // namespace fourfold
