#include "model/npy.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "core/file_io.h"
#include "fourfold/errors.h"

namespace fourfold::model {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

const char* descr_of(DType d) {
  switch (d) {
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    default: return nullptr;
  }
}

}  // namespace

void write_npy(const std::filesystem::path& path, const Tensor& t) {
  const char* descr = descr_of(t.dtype());
  if (!descr) fail<ValueError>("write_npy", "tensor", "float32, float64, int32 or int64", std::string(dtype_name(t.dtype())));
  std::string shape;
  for (int64_t s : t.shape()) shape += fmt::format("{}, ", s);
  if (t.dim() > 1) shape.resize(shape.size() - 2);   // (5,) keeps its comma, (2, 3) loses the last one
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // Magic (6) + version (2) + length (2) + header + '\n', padded with spaces to a multiple of 64.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  const Tensor c = t.contiguous();
  AtomicFile out(path);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char preamble[10] = {kMagic[0], kMagic[1], kMagic[2], kMagic[3], kMagic[4], kMagic[5], 1, 0,
                             static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(preamble, 10);
  out.write(header);
  out.write(c.data(), c.nbytes());
  out.commit();
}

Tensor read_npy(const std::filesystem::path& path) {
  const std::string file = path.string();
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail<FormatError>(file, "file", "a readable .npy file", "it could not be opened");
  char magic[6] = {};
  in.read(magic, 6);
  if (!in || std::memcmp(magic, kMagic, 6) != 0) fail<FormatError>(file, "magic", "\\x93NUMPY", "something else");
  const int major = in.get();
  in.get();
  uint32_t len = 0;
  if (major == 1) {
    len = static_cast<uint32_t>(in.get()) | static_cast<uint32_t>(in.get()) << 8;
  } else if (major == 2 || major == 3) {
    for (int i = 0; i < 4; ++i) len |= static_cast<uint32_t>(in.get()) << (8 * i);
  } else {
    fail<FormatError>(file, "version", "1, 2 or 3", std::to_string(major));
  }
  if (!in || len > (1u << 20)) fail<FormatError>(file, "header length", "at most 1 MiB", std::to_string(len));
  std::string header(len, '\0');
  in.read(header.data(), len);
  if (!in) fail<FormatError>(file, "header", "complete", "the file ends inside it");
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'")))
    fail<FormatError>(file, "descr", "present", header);
  const std::string descr = m[1];
  DType dtype;
  if (descr == "<f4") dtype = DType::f32;
  else if (descr == "<f8") dtype = DType::f64;
  else if (descr == "<i4") dtype = DType::i32;
  else if (descr == "<i8") dtype = DType::i64;
  else fail<FormatError>(file, "descr", "<f4, <f8, <i4 or <i8", descr);
  if (!std::regex_search(header, m, std::regex("'fortran_order':\\s*False")))
    fail<FormatError>(file, "fortran_order", "False (C order)", header);
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    fail<FormatError>(file, "shape", "a tuple", header);
  Shape shape;
  std::stringstream dims(m[1].str());
  for (std::string part; std::getline(dims, part, ',');) {
    if (part.find_first_not_of(" ") == std::string::npos) continue;
    try {
      const long long v = std::stoll(part);
      if (v < 0 || v > (int64_t(1) << 40)) throw std::out_of_range("dim");
      shape.push_back(v);
    } catch (const std::exception&) {
      fail<FormatError>(file, "shape", "non-negative integers", m[1].str());
    }
  }
  Tensor t = Tensor::empty(shape, dtype);
  in.read(static_cast<char*>(t.data()), static_cast<std::streamsize>(t.nbytes()));
  if (!in) fail<FormatError>(file, "data", fmt::format("{} bytes", t.nbytes()), "a shorter file");
  return t;
}

}  // namespace fourfold::model
