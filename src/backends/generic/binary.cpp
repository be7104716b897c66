// Generic add and mul for operands and result of one float dtype: broadcast operands are materialized as f32
// temporaries of the result's shape, then one elementwise pass (and a scaling pass for alpha != 1).
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

void binary_passes(const BinaryArgs& args, Binary op, double alpha) {
  const int64_t n = args.out.numel();
  if (n == 0) return;
  const Tensor a = to_f32(args.a);
  Tensor b = to_f32(args.b);
  if (alpha != 1.0) {
    Tensor scaled = empty_f32(args.out.shape());
    affine(b.data_as<float>(), static_cast<float>(alpha), 0.0f, scaled.data_as<float>(), n);
    b = scaled;
  }
  Tensor y = empty_f32(args.out.shape());
  binary(op, a.data_as<float>(), b.data_as<float>(), Broadcast::none, y.data_as<float>(), 1, n);
  from_f32(y, args.out);
}

// Mixed dtypes promote; the reference handles them (and integers, complex and f64).
bool binary_covers(const BinaryArgs& a) {
  return computes(a.out.dtype()) && a.a.dtype() == a.out.dtype() && a.b.dtype() == a.out.dtype();
}

void add(const BinaryArgs& args) { binary_passes(args, Binary::add, args.alpha); }
void mul(const BinaryArgs& args) { binary_passes(args, Binary::mul, 1.0); }

}  // namespace

FOURFOLD_GENERIC_KERNELS(binary) {
  t.add = entry(&add, &binary_covers);
  t.mul = entry(&mul, &binary_covers);
}

}  // namespace fourfold::generic
