// One exception hierarchy. Every message names the op or file, the argument, what was expected and what was found.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fourfold {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class ShapeError : public Error { using Error::Error; };        // ranks, sizes, broadcasting
class DTypeError : public Error { using Error::Error; };        // unsupported or mismatched element types
class DeviceError : public Error { using Error::Error; };       // tensors on different or unavailable devices
class FormatError : public Error { using Error::Error; };       // files and records: safetensors, config.json, JSON
class ValueError : public Error { using Error::Error; };        // argument values: indices, offsets, counts, options
class OutOfMemoryError : public Error { using Error::Error; };  // the allocator could not get memory
class UnsupportedError : public Error { using Error::Error; };  // valid request that this build or tier cannot do

// "<where>: <kind> '<name>': expected <expected>, found <found>". kind "argument": a parameter of a call;
// "field": a key of a file (config.json, a suite file, a record), as every checked-JSON reader says it.
std::string describe_error(std::string_view where, std::string_view name, std::string_view expected,
                           std::string_view found, std::string_view kind = "argument");

template <class E>
[[noreturn]] void fail(std::string_view where, std::string_view argument, std::string_view expected,
                       std::string_view found) {
  throw E(describe_error(where, argument, expected, found));
}

template <class E>
[[noreturn]] void fail_field(std::string_view file, std::string_view field, std::string_view expected,
                             std::string_view found) {
  throw E(describe_error(file, field, expected, found, "field"));
}

}  // namespace fourfold
