// Generic matmul / bmm, as a graph lowering composes it: both operands materialized as f32 (broadcast batches
// copied out), one batched GEMM (bmm) into an f32 temporary, one conversion
// to the output dtype. complex64 splits each operand into real and imaginary f32 planes and runs four real
// products, combined by two elementwise passes (re = ArBr - AiBi, im = ArBi + AiBr).
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

struct Planes {
  Tensor re, im;
};

// t (complex64, any strides) as two contiguous f32 tensors of t's shape.
Planes split(const Tensor& t) {
  const Tensor c = t.contiguous();
  Planes p{empty_f32(t.shape()), empty_f32(t.shape())};
  const float* src = static_cast<const float*>(c.data());
  float* re = p.re.data_as<float>();
  float* im = p.im.data_as<float>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    re[i] = src[2 * i];
    im[i] = src[2 * i + 1];
  }
  return p;
}

// out[b] = a[b] b[b] for every batch b of contiguous f32 [B, M, K] and [B, K, N].
void batched_gemm(const Tensor& a, const Tensor& b, Tensor& out, int64_t batches, int64_t m, int64_t n, int64_t k) {
  gemm_nn(a.data_as<float>(), b.data_as<float>(), out.data_as<float>(), m, n, k, batches);
}

bool matmul_covers(const MatmulArgs& a) { return computes(a.a.dtype()) || a.a.dtype() == DType::complex64; }

void matmul(const MatmulArgs& args) {
  const int64_t m = args.out.size(-2), n = args.out.size(-1), k = args.a.size(-1);
  if (args.out.numel() == 0) return;
  const int64_t batches = args.out.numel() / (m * n);
  if (args.a.dtype() != DType::complex64) {
    const Tensor a = to_f32(args.a), b = to_f32(args.b);
    Tensor product = empty_f32(args.out.shape());
    batched_gemm(a, b, product, batches, m, n, k);
    from_f32(product, args.out);
    return;
  }
  const Planes a = split(args.a), b = split(args.b);
  Tensor rr = empty_f32(args.out.shape()), ii = empty_f32(args.out.shape());
  Tensor ri = empty_f32(args.out.shape()), ir = empty_f32(args.out.shape());
  batched_gemm(a.re, b.re, rr, batches, m, n, k);
  batched_gemm(a.im, b.im, ii, batches, m, n, k);
  batched_gemm(a.re, b.im, ri, batches, m, n, k);
  batched_gemm(a.im, b.re, ir, batches, m, n, k);
  const int64_t total = args.out.numel();
  Tensor re = empty_f32(args.out.shape()), im = empty_f32(args.out.shape());
  binary(Binary::sub, rr.data_as<float>(), ii.data_as<float>(), Broadcast::none, re.data_as<float>(), 1, total);
  binary(Binary::add, ri.data_as<float>(), ir.data_as<float>(), Broadcast::none, im.data_as<float>(), 1, total);
  Tensor c = Tensor::empty(args.out.shape(), DType::complex64);
  float* dst = static_cast<float*>(c.data());
  for (int64_t i = 0; i < total; ++i) {
    dst[2 * i] = re.data_as<float>()[i];
    dst[2 * i + 1] = im.data_as<float>()[i];
  }
  copy(c, args.out);
}

}  // namespace

FOURFOLD_GENERIC_KERNELS(matmul) {
  t.matmul = entry(&matmul, &matmul_covers);
}

}  // namespace fourfold::generic
