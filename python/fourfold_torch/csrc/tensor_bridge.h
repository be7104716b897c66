// at::Tensor <-> fourfold::Tensor without copies, and the frame every torch.ops.fourfold kernel runs in: the
// thread count PyTorch was given, and fourfold's errors raised as the Python exceptions PyTorch users expect.
// (No fmt here: torch bundles its own fmt headers, whose symbols the system libfmt that libfourfold links lacks.)
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "fourfold/errors.h"
#include "fourfold/ops.h"
#include "fourfold/tensor.h"

namespace fourfold_torch {

// A view of x's memory (its strides as they are); x stays alive as long as the view. TypeError for a dtype
// fourfold has no name for, ValueError for a tensor that is not on the CPU; both name `op` and `arg`.
fourfold::Tensor to_fourfold(const at::Tensor& x, const char* op, const char* arg);
fourfold::OptTensor to_fourfold(const std::optional<at::Tensor>& x, const char* op, const char* arg);
// A weight the kernels read in place: its last dim must be contiguous (a transposed or column-sliced weight is
// refused, never copied behind the caller's back).
fourfold::Tensor weight_to_fourfold(const at::Tensor& w, const char* op, const char* arg);
// A torch tensor over the result's memory (its storage, a PyTorch allocator block since the extension installs
// PyTorch's allocator as fourfold's, is freed when the tensor dies).
at::Tensor to_torch(const fourfold::Tensor& t);

at::ScalarType torch_dtype(fourfold::DType dtype);
std::vector<int64_t> int_list(c10::IntArrayRef values);

// ValueError "fourfold.<op>: argument '<arg>': expected <expected>, found <found>".
[[noreturn]] void refuse(const char* op, const char* arg, const std::string& expected, const std::string& found);

// Runs one op on PyTorch's intra-op threads (fourfold::use_host_threads; once per process), fourfold::DTypeError
// raised as TypeError and every other fourfold::Error as ValueError (their messages already name the op and the
// argument).
void use_torch_threads();
[[noreturn]] void rethrow_as_torch_error(const fourfold::Error& e);

template <class F>
auto run_op(F&& body) {
  use_torch_threads();
  try {
    return body();
  } catch (const fourfold::Error& e) {
    rethrow_as_torch_error(e);
  }
}

}  // namespace fourfold_torch
