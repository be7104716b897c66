#include "tensor_bridge.h"

#include <ATen/Parallel.h>

#include <memory>

#include "fourfold/parallel.h"

namespace fourfold_torch {
namespace {

using fourfold::DType;

// Each fourfold dtype and PyTorch's name for it: one table read both ways.
struct DTypePair {
  DType fourfold;
  at::ScalarType torch;
};
constexpr DTypePair kDTypes[] = {
    {DType::f32, at::kFloat},
    {DType::f16, at::kHalf},
    {DType::bf16, at::kBFloat16},
    {DType::f8_e4m3fn, at::kFloat8_e4m3fn},
    {DType::f8_e5m2, at::kFloat8_e5m2},
    {DType::complex64, at::kComplexFloat},
    {DType::i32, at::kInt},
    {DType::i64, at::kLong},
    {DType::boolean, at::kBool},
    {DType::f64, at::kDouble},
};

std::optional<DType> fourfold_dtype(at::ScalarType t) {
  for (const DTypePair& d : kDTypes)
    if (d.torch == t) return d.fourfold;
  return std::nullopt;
}

}  // namespace

void refuse(const char* op, const char* arg, const std::string& expected, const std::string& found) {
  TORCH_CHECK_VALUE(false, fourfold::describe_error(std::string("fourfold.") + op, arg, expected, found));
}

fourfold::Tensor to_fourfold(const at::Tensor& x, const char* op, const char* arg) {
  if (!x.defined()) refuse(op, arg, "a tensor", "an undefined tensor");
  if (!x.device().is_cpu()) refuse(op, arg, "a CPU tensor", x.device().str());
  const std::optional<DType> dtype = fourfold_dtype(x.scalar_type());
  TORCH_CHECK_TYPE(dtype.has_value(),
                   fourfold::describe_error(std::string("fourfold.") + op, arg,
                                            "float32, float16, bfloat16, float8, int32, int64 or bool",
                                            "torch." + std::string(c10::getDtypeNames(x.scalar_type()).first)));
  // The view holds a reference to x's storage, not a copy of x.
  auto owner = std::make_shared<at::Tensor>(x);
  return fourfold::Tensor::from_blob(x.data_ptr(), int_list(x.sizes()), int_list(x.strides()), *dtype,
                                     std::static_pointer_cast<void>(owner));
}

fourfold::OptTensor to_fourfold(const std::optional<at::Tensor>& x, const char* op, const char* arg) {
  if (!x.has_value() || !x->defined()) return std::nullopt;
  return to_fourfold(*x, op, arg);
}

fourfold::Tensor weight_to_fourfold(const at::Tensor& w, const char* op, const char* arg) {
  if (w.dim() >= 1 && w.size(-1) > 1 && w.stride(-1) != 1)
    refuse(op, arg, "a weight whose last dim is contiguous (fourfold reads weights in place, it does not copy them)",
           c10::str("strides ", w.strides()));
  return to_fourfold(w, op, arg);
}

at::ScalarType torch_dtype(DType dtype) {
  for (const DTypePair& d : kDTypes)
    if (d.fourfold == dtype) return d.torch;
  TORCH_CHECK(false, "fourfold: a result dtype PyTorch has no name for");
}

at::Tensor to_torch(const fourfold::Tensor& t) {
  auto storage = t.storage();
  return at::from_blob(t.data(), t.shape(), t.strides(), [storage](void*) mutable { storage.reset(); },
                       at::TensorOptions().dtype(torch_dtype(t.dtype())).device(at::kCPU));
}

std::vector<int64_t> int_list(c10::IntArrayRef values) { return {values.begin(), values.end()}; }

namespace {

int torch_threads() { return at::get_num_threads(); }

void run_on_torch_threads(int chunks, const std::function<void(int)>& chunk) {
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) chunk(static_cast<int>(c));
  });
}

}  // namespace

void use_torch_threads() {
  // fourfold's loops run on PyTorch's intra-op threads, so their count is torch.get_num_threads() and no
  // second pool spins against PyTorch's workers (which spin on after each PyTorch op, taking a core from the
  // pool's worker: 10-20% of a 2-thread GEMV here).
  static const fourfold::HostThreads torch_host{&torch_threads, &run_on_torch_threads};
  static const bool installed = (fourfold::use_host_threads(&torch_host), true);
  (void)installed;
}

void rethrow_as_torch_error(const fourfold::Error& e) {
  if (dynamic_cast<const fourfold::DTypeError*>(&e) != nullptr) TORCH_CHECK_TYPE(false, e.what());
  TORCH_CHECK_VALUE(false, e.what());
}

}  // namespace fourfold_torch
