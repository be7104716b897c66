// topk: checks, output shapes and routing.
#include <string>

#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int dim, bool largest, bool sorted) {
  check::dtype_in("topk", "x", x, {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i32, DType::i64});
  const int d = normalize_dim(dim, x.dim(), "topk");
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  if (k < 0 || k > n)
    fail<ValueError>("topk", "k", fmt::format("k in [0, {}] (the size of dim {})", n, d), std::to_string(k));
  if (x.dim() == 0) {
    // PyTorch returns the 0-D input itself (index 0) for k = 0 as well as for k = 1.
    return {x.clone(), Tensor::zeros({}, DType::i64)};
  }
  Shape out_shape = x.shape();
  out_shape[d] = k;
  Tensor values = Tensor::empty(out_shape, x.dtype());
  Tensor indices = Tensor::empty(out_shape, DType::i64);
  FOURFOLD_DISPATCH(topk, (TopkArgs{x, k, d, largest, sorted, values, indices}));
  return {values, indices};
}

}  // namespace fourfold
