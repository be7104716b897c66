// The safetensors header parser: trusts nothing in the file. Every length and offset is checked against the
// file size before it is used, and arithmetic on them is overflow-checked, so a fuzzed file gives a FormatError.
#include "model/formats/safetensors_header.h"

#include <algorithm>
#include <array>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fourfold/errors.h"
#include "model/formats/bounded_json.h"
#include "model/formats/json_excerpt.h"

namespace fourfold::model {
namespace {

using nlohmann::json;

// The safetensors reference implementation's limit; a larger header is a corrupt length field, not a header.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr size_t kMaxRank = 8;

struct DTypeName {
  DType dtype;
  const char* name;
};
// FP4 codes and MX scales are written as U8 (compressed-tensors, gpt-oss) and retyped by the loader that knows
// what they are (Tensor::view_dtype); F8_E8M0 is safetensors' own name for e8m0 scales.
constexpr std::array<DTypeName, 11> kNames = {{{DType::bf16, "BF16"},
                                              {DType::f16, "F16"},
                                              {DType::f32, "F32"},
                                              {DType::f64, "F64"},
                                              {DType::f8_e4m3fn, "F8_E4M3"},
                                              {DType::f8_e5m2, "F8_E5M2"},
                                              {DType::i32, "I32"},
                                              {DType::i64, "I64"},
                                              {DType::boolean, "BOOL"},
                                              {DType::u8, "U8"},
                                              {DType::f8_e8m0fnu, "F8_E8M0"}}};

size_t element_size(DType dtype) {
  switch (dtype) {
    case DType::f64: case DType::i64: return 8;
    case DType::f32: case DType::i32: return 4;
    case DType::bf16: case DType::f16: return 2;
    default: return 1;
  }
}

// A name for messages: tensor names come from the file, so they are cut to a readable length.
std::string tensor_label(const std::string& name) {
  std::string label = "tensor " + name;
  if (label.size() > 200) {
    label.resize(197);
    label += "...";
  }
  return label;
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The first key repeated within one JSON object, if any: nlohmann keeps the last of a repeated key silently, and
// a duplicated tensor name would hide a tensor. A SAX pass (linear; nlohmann's parse callbacks rescan the parent
// object at every object end, which is quadratic in the tensor count).
class DuplicateKeyFinder : public nlohmann::json_sax<json> {
 public:
  std::string duplicate;
  bool start_object(std::size_t) override {
    open_.emplace_back();
    return true;
  }
  bool end_object() override {
    open_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    if (!open_.back().insert(k).second && duplicate.empty()) duplicate = k;
    return true;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  std::vector<std::set<std::string>> open_;
};

json parse_rejecting_duplicates(const char* first, const char* last, const std::string& file_name) {
  const json root = parse_bounded_json(std::string_view(first, static_cast<size_t>(last - first)), file_name, "header");
  DuplicateKeyFinder finder;
  json::sax_parse(first, last, &finder);
  if (!finder.duplicate.empty())
    fail<FormatError>(file_name, tensor_label(finder.duplicate), "a name used once", "it twice");
  return root;
}

uint64_t offset_value(const json& v, const std::string& file_name, const std::string& label) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    fail<FormatError>(file_name, label, "data_offsets of two non-negative integers", json_excerpt(v));
  return v.get<uint64_t>();
}

SafetensorsEntry parse_entry(const std::string& name, const json& v, uint64_t data_size, const std::string& file) {
  const std::string label = tensor_label(name);
  if (!v.is_object()) fail<FormatError>(file, label, "an object with dtype, shape and data_offsets", json_excerpt(v));
  SafetensorsEntry e;
  e.name = name;

  const auto dtype = v.find("dtype");
  if (dtype == v.end() || !dtype->is_string())
    fail<FormatError>(file, label, "a dtype string", dtype == v.end() ? "none" : json_excerpt(*dtype));
  e.dtype = safetensors_dtype(dtype->get_ref<const std::string&>(), file + ": " + label);

  const auto shape = v.find("shape");
  if (shape == v.end() || !shape->is_array() || shape->size() > kMaxRank)
    fail<FormatError>(file, label, fmt::format("a shape of at most {} sizes", kMaxRank),
                      shape == v.end() ? "none" : json_excerpt(*shape));
  uint64_t bytes = element_size(e.dtype);
  for (const json& s : *shape) {
    if (!s.is_number_integer() || (s.is_number_integer() && !s.is_number_unsigned() && s.get<int64_t>() < 0) ||
        s.get<uint64_t>() > uint64_t(INT64_MAX))
      fail<FormatError>(file, label, "a shape of non-negative integers", json_excerpt(*shape));
    const uint64_t size = s.get<uint64_t>();
    if (__builtin_mul_overflow(bytes, size, &bytes))
      fail<FormatError>(file, label, "a shape whose byte size fits in 64 bits", json_excerpt(*shape));
    e.shape.push_back(static_cast<int64_t>(size));
  }

  const auto offsets = v.find("data_offsets");
  if (offsets == v.end() || !offsets->is_array() || offsets->size() != 2)
    fail<FormatError>(file, label, "data_offsets [begin, end]", offsets == v.end() ? "none" : json_excerpt(*offsets));
  e.begin = offset_value((*offsets)[0], file, label);
  e.end = offset_value((*offsets)[1], file, label);
  if (e.begin > e.end || e.end > data_size)
    fail<FormatError>(file, label, fmt::format("data_offsets within the data region of {} bytes", data_size),
                      fmt::format("[{}, {}]", e.begin, e.end));
  if (e.end - e.begin != bytes)
    fail<FormatError>(file, label,
                      fmt::format("{} bytes for shape {} of {}", bytes, json_excerpt(*shape), dtype->get<std::string>()),
                      fmt::format("{} bytes in data_offsets [{}, {}]", e.end - e.begin, e.begin, e.end));
  return e;
}

std::map<std::string, std::string> parse_metadata(const json& v, const std::string& file) {
  if (!v.is_object()) fail<FormatError>(file, "__metadata__", "an object of strings", json_excerpt(v));
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string()) fail<FormatError>(file, "__metadata__." + key, "a string", json_excerpt(value));
    out[key] = value.get<std::string>();
  }
  return out;
}

// Tensors must tile the data region: sorted by offset, each starts where the previous ended, the last ends at the
// end of the file (the format forbids holes, and an overlap would alias two tensors).
void check_tiling(const std::vector<SafetensorsEntry>& sorted, uint64_t data_size, const std::string& file) {
  uint64_t expected = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const SafetensorsEntry& e : sorted) {
    if (e.begin < expected)
      fail<FormatError>(file, tensor_label(e.name), fmt::format("data not overlapping {} (which ends at {})",
                                                                 previous->name, expected),
                        fmt::format("data_offsets [{}, {}]", e.begin, e.end));
    if (e.begin > expected)
      fail<FormatError>(file, tensor_label(e.name), fmt::format("data starting at {} (no hole in the data)", expected),
                        fmt::format("data_offsets [{}, {}]", e.begin, e.end));
    expected = e.end;
    previous = &e;
  }
  if (expected != data_size)
    fail<FormatError>(file, "data region", fmt::format("{} bytes, all covered by tensors", data_size),
                      fmt::format("tensors covering only the first {}", expected));
}

}  // namespace

DType safetensors_dtype(std::string_view name, const std::string& where) {
  for (const DTypeName& n : kNames)
    if (name == n.name) return n.dtype;
  std::string shown_name(name.substr(0, 40));
  fail<FormatError>(where, "dtype", "one of BF16, F16, F32, F64, F8_E4M3, F8_E5M2, F8_E8M0, I32, I64, U8, BOOL", shown_name);
}

std::string_view safetensors_dtype_name(DType dtype) {
  for (const DTypeName& n : kNames)
    if (n.dtype == dtype) return n.name;
  if (dtype == DType::f4_e2m1fn_x2) return "U8";   // packed codes, as compressed-tensors writes them
  fail<UnsupportedError>("safetensors", "dtype", "a dtype safetensors stores (not complex64)", std::string(dtype_name(dtype)));
}

SafetensorsHeader parse_safetensors_header(const uint8_t* bytes, size_t size, const std::string& file_name) {
  if (size < 8)
    fail<FormatError>(file_name, "header length", "an 8-byte length field", fmt::format("a file of {} bytes", size));
  const uint64_t header_bytes = read_u64_le(bytes);
  if (header_bytes > size - 8 || header_bytes > kMaxHeaderBytes)
    fail<FormatError>(file_name, "header length",
                      fmt::format("at most the {} bytes after the length field (and at most {})", size - 8,
                                  kMaxHeaderBytes),
                      std::to_string(header_bytes));
  const char* text = reinterpret_cast<const char*>(bytes + 8);
  const json root = parse_rejecting_duplicates(text, text + header_bytes, file_name);
  if (!root.is_object()) fail<FormatError>(file_name, "header", "a JSON object", json_excerpt(root));

  SafetensorsHeader h;
  h.data_offset = 8 + header_bytes;
  const uint64_t data_size = size - h.data_offset;
  for (const auto& [name, value] : root.items()) {
    if (name == "__metadata__")
      h.metadata = parse_metadata(value, file_name);
    else
      h.tensors.push_back(parse_entry(name, value, data_size, file_name));
  }
  std::sort(h.tensors.begin(), h.tensors.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  check_tiling(h.tensors, data_size, file_name);
  return h;
}

}  // namespace fourfold::model
