// softmax, log_softmax and their backward: checks and routing.
#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

template <OpId kOp>
Tensor softmax_like(const char* name, Kernel<SoftmaxArgs> KernelTable::*entry, const Tensor& x, int dim) {
  check::dtype_in(name, "x", x, check::kFloatTypes);
  const int d = normalize_dim(dim, x.dim(), name);
  const Tensor x_view = x.dim() == 0 ? x.reshape({1}) : x;   // a 0-D input is one row of one element
  Tensor out = Tensor::empty(x_view.shape(), x.dtype());
  dispatch(kOp, entry, SoftmaxArgs{x_view, d, out});
  return x.dim() == 0 ? out.reshape({}) : out;
}

template <OpId kOp>
Tensor softmax_backward_like(const char* name, Kernel<SoftmaxBackwardArgs> KernelTable::*entry,
                             const Tensor& grad_out, const Tensor& out, int dim) {
  check::dtype_in(name, "grad_out", grad_out, check::kFloatTypes);
  check::dtype_in(name, "out", out, check::kFloatTypes);
  check::same_dtype(name, "grad_out", grad_out, "out", out);
  if (grad_out.shape() != out.shape())
    fail<ShapeError>(name, "grad_out", "the shape of 'out' " + shape_string(out.shape()), shape_string(grad_out.shape()));
  const int d = normalize_dim(dim, out.dim(), name);
  const bool scalar = out.dim() == 0;
  const Tensor g = scalar ? grad_out.reshape({1}) : grad_out;
  const Tensor o = scalar ? out.reshape({1}) : out;
  Tensor grad_in = Tensor::empty(o.shape(), out.dtype());
  dispatch(kOp, entry, SoftmaxBackwardArgs{g, o, d, grad_in});
  return scalar ? grad_in.reshape({}) : grad_in;
}

}  // namespace

Tensor softmax(const Tensor& x, int dim) {
  return softmax_like<OpId::softmax>("softmax", &KernelTable::softmax, x, dim);
}

Tensor log_softmax(const Tensor& x, int dim) {
  return softmax_like<OpId::log_softmax>("log_softmax", &KernelTable::log_softmax, x, dim);
}

Tensor softmax_backward(const Tensor& grad_out, const Tensor& out, int dim) {
  return softmax_backward_like<OpId::softmax_backward>("softmax_backward", &KernelTable::softmax_backward, grad_out,
                                                       out, dim);
}

Tensor log_softmax_backward(const Tensor& grad_out, const Tensor& out, int dim) {
  return softmax_backward_like<OpId::log_softmax_backward>("log_softmax_backward", &KernelTable::log_softmax_backward,
                                                           grad_out, out, dim);
}

}  // namespace fourfold
