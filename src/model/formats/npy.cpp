#include "model/formats/npy.h"

#include <cstring>

#include <fmt/format.h>

#include "core/file_io.h"
#include "fourfold/errors.h"
#include "model/formats/npy_header.h"

namespace fourfold::model {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
// Latents and golden arrays are megabytes; the whole file is read before its header is trusted.
constexpr uint64_t kMaxNpyBytes = uint64_t(4) << 30;

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
  const std::string bytes = read_regular_file(path, kMaxNpyBytes);
  const NpyHeader h = parse_npy_header(bytes, file);
  Tensor t = Tensor::empty(h.shape, h.dtype);
  if (h.data_bytes > 0) std::memcpy(t.data(), bytes.data() + h.data_offset, h.data_bytes);
  return t;
}

}  // namespace fourfold::model
