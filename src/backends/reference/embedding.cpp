// Reference embedding: row gather. Elements are copied as bytes, so every value (NaN payloads too) is exact.
#include <cstdint>
#include <cstring>

#include "backends/reference/reference.h"

namespace fourfold::ref {

void embedding(const EmbeddingArgs& args) {
  const size_t element = dtype_size(args.weight.dtype());
  const int64_t rows = args.indices.size(0), width = args.weight.size(1);
  for (int64_t t = 0; t < rows; ++t) {
    int64_t row;
    const void* p = args.indices.element_ptr({&t, 1});
    if (args.indices.dtype() == DType::i32) {
      int32_t v;
      std::memcpy(&v, p, 4);
      row = v;
    } else {
      std::memcpy(&row, p, 8);
    }
    for (int64_t d = 0; d < width; ++d) {
      const int64_t src[2] = {row, d}, dst[2] = {t, d};
      std::memcpy(args.out.element_ptr(dst), args.weight.element_ptr(src), element);
    }
  }
}

}  // namespace fourfold::ref
