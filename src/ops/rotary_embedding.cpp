// rotary_embedding: checks, cos/sin expanded against x[..., :R/2], and routing.
#include <string>

#include <fmt/format.h>

#include "fourfold/ops.h"
#include "ops/checks.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

// Checks the arguments and runs the op into out (a new tensor, or x itself).
void rotary_into(const char* op, const Tensor& x, const Tensor& cos, const Tensor& sin, RotaryStyle style,
                 Tensor& out) {
  check::dtype_in(op, "x", x, check::kFloatTypes);
  check::dtype_in(op, "cos", cos, check::kFloatTypes);
  check::dtype_in(op, "sin", sin, check::kFloatTypes);
  check::same_dtype(op, "cos", cos, "x", x);
  check::same_dtype(op, "sin", sin, "x", x);
  check::rank_at_least(op, "x", x, 1);
  check::rank_at_least(op, "cos", cos, 1);
  if (sin.shape() != cos.shape())
    fail<ShapeError>(op, "sin", "the shape of 'cos' " + shape_string(cos.shape()), "shape " + shape_string(sin.shape()));
  const int64_t d = x.size(-1), half = cos.size(-1);
  // R = 2 * half is even by construction; it only has to fit in D.
  if (2 * half > d)
    fail<ShapeError>(op, "cos", fmt::format("a last dim R/2 with R <= {} (the last dim of 'x')", d),
                     "shape " + shape_string(cos.shape()));
  Shape target = x.shape();
  target.back() = half;
  bool fits = cos.dim() <= x.dim();
  for (int i = 2; fits && i <= cos.dim(); ++i) {
    const int64_t have = cos.shape()[cos.dim() - i];
    fits = have == 1 || have == target[target.size() - i];
  }
  if (!fits)
    fail<ShapeError>(op, "cos", fmt::format("a shape that broadcasts to {} (x[..., :R/2])", shape_string(target)),
                     "shape " + shape_string(cos.shape()));
  const Tensor c = cos.expand(target);
  const Tensor s = sin.expand(target);
  const RotaryArgs args{x, c, s, style, out};
  FOURFOLD_DISPATCH(rotary_embedding, args);
}

}  // namespace

Tensor rotary_embedding(const Tensor& x, const Tensor& cos, const Tensor& sin, RotaryStyle style) {
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  rotary_into("rotary_embedding", x, cos, sin, style, out);
  return out;
}

void rotary_embedding_(Tensor& x, const Tensor& cos, const Tensor& sin, RotaryStyle style) {
  const char* op = "rotary_embedding_";
  check::defined(op, "x", x);
  rotary_into(op, x, cos, sin, style, x);
}

}  // namespace fourfold
