// Generic rotary_embedding: the two halves of each pair gathered into f32 temporaries (strided views of x),
// then four multiplies and an add and a subtract, each a pass, and the two results scattered back. Every read
// of x happens before the first write, so out may be x (rotary_embedding_).
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

bool rotary_embedding_covers(const RotaryArgs& a) { return computes(a.x.dtype()); }

void rotary_embedding(const RotaryArgs& a) {
  if (a.x.numel() == 0) return;
  const int last = a.x.dim() - 1;
  const int64_t d = a.x.size(last), half = a.cos.size(last), n = a.x.numel() / d * half;
  const bool inter = a.style == RotaryStyle::interleaved;
  auto first = [&](const Tensor& t) { return inter ? t.slice(last, 0, 2 * half, 2) : t.narrow(last, 0, half); };
  auto second = [&](const Tensor& t) { return inter ? t.slice(last, 1, 2 * half, 2) : t.narrow(last, half, half); };
  const bool in_place = a.out.data() == a.x.data() && a.out.strides() == a.x.strides();
  if (half > 0) {
    const Tensor x0 = to_f32(first(a.x)), x1 = to_f32(second(a.x)), c = to_f32(a.cos), s = to_f32(a.sin);
    Tensor x0c = empty_f32(x0.shape()), x1s = empty_f32(x0.shape()), x1c = empty_f32(x0.shape());
    Tensor x0s = empty_f32(x0.shape()), y0 = empty_f32(x0.shape()), y1 = empty_f32(x0.shape());
    binary(Binary::mul, x0.data_as<float>(), c.data_as<float>(), Broadcast::none, x0c.data_as<float>(), 1, n);
    binary(Binary::mul, x1.data_as<float>(), s.data_as<float>(), Broadcast::none, x1s.data_as<float>(), 1, n);
    binary(Binary::mul, x1.data_as<float>(), c.data_as<float>(), Broadcast::none, x1c.data_as<float>(), 1, n);
    binary(Binary::mul, x0.data_as<float>(), s.data_as<float>(), Broadcast::none, x0s.data_as<float>(), 1, n);
    binary(Binary::sub, x0c.data_as<float>(), x1s.data_as<float>(), Broadcast::none, y0.data_as<float>(), 1, n);
    binary(Binary::add, x1c.data_as<float>(), x0s.data_as<float>(), Broadcast::none, y1.data_as<float>(), 1, n);
    Tensor out0 = first(a.out), out1 = second(a.out);
    from_f32(y0, out0);
    from_f32(y1, out1);
  }
  if (!in_place && d > 2 * half) {
    Tensor tail = a.out.narrow(last, 2 * half, d - 2 * half);
    copy(a.x.narrow(last, 2 * half, d - 2 * half), tail);
  }
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(rotary_embedding) {
  t.rotary_embedding = entry(&rotary_embedding, &rotary_embedding_covers);
}

}  // namespace fourfold::generic
