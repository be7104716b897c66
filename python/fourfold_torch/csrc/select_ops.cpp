// softmax / log_softmax along a dim, topk and argmax (the router's and the sampler's reductions).
#include <torch/library.h>

#include "tensor_bridge.h"

namespace fourfold_torch {
namespace {

at::Tensor softmax(const at::Tensor& x, int64_t dim) {
  return run_op([&] { return to_torch(fourfold::softmax(to_fourfold(x, "softmax", "x"), static_cast<int>(dim))); });
}

at::Tensor log_softmax(const at::Tensor& x, int64_t dim) {
  return run_op(
      [&] { return to_torch(fourfold::log_softmax(to_fourfold(x, "log_softmax", "x"), static_cast<int>(dim))); });
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  return run_op([&] {
    auto [values, indices] = fourfold::topk(to_fourfold(x, "topk", "x"), k, static_cast<int>(dim), largest, sorted);
    return std::make_tuple(to_torch(values), to_torch(indices));
  });
}

at::Tensor argmax(const at::Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return run_op([&] {
    const std::optional<int> d = dim ? std::optional<int>(static_cast<int>(*dim)) : std::nullopt;
    return to_torch(fourfold::argmax(to_fourfold(x, "argmax", "x"), d, keepdim));
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(fourfold, m) {
  m.def("softmax(Tensor x, int dim) -> Tensor");
  m.def("log_softmax(Tensor x, int dim) -> Tensor");
  m.def("topk(Tensor x, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor, Tensor)");
  m.def("argmax(Tensor x, int? dim=None, bool keepdim=False) -> Tensor");
}

TORCH_LIBRARY_IMPL(fourfold, CPU, m) {
  m.impl("softmax", &softmax);
  m.impl("log_softmax", &log_softmax);
  m.impl("topk", &topk);
  m.impl("argmax", &argmax);
}

}  // namespace fourfold_torch
