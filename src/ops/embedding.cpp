// embedding: checks (every index in range), flattening of the indices, and routing.
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

// Exact, so that an int64 index past 2^53 is reported as it is.
int64_t load_index(const Tensor& indices, const int64_t* index) {
  const void* p = indices.element_ptr({index, static_cast<size_t>(indices.dim())});
  if (indices.dtype() == DType::i32) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  check::dtype_in("embedding", "weight", weight,
                  {DType::f32, DType::f16, DType::bf16, DType::f64, DType::f8_e4m3fn, DType::f8_e5m2});
  check::rank("embedding", "weight", weight, 2, "[V, D]");
  check::dtype_in("embedding", "indices", indices, {DType::i32, DType::i64});
  const int64_t vocab = weight.size(0);
  for_each_index(indices.shape(), [&](const int64_t* index) {
    const int64_t i = load_index(indices, index);
    if (i < 0 || i >= vocab)
      fail<ValueError>("embedding", "indices", fmt::format("indices in [0, V) with V = {}", vocab),
                       fmt::format("index {} at position {}", i,
                                   shape_string(Shape(index, index + indices.dim()))));
  });
  Shape out_shape = indices.shape();
  out_shape.push_back(weight.size(1));
  const Tensor flat = indices.reshape({indices.numel()});
  Tensor out = Tensor::empty({indices.numel(), weight.size(1)}, weight.dtype());
  FOURFOLD_DISPATCH(embedding, (EmbeddingArgs{weight, flat, out}));
  return out.reshape(out_shape);
}

}  // namespace fourfold
