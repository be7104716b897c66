// Dedicated matmul / bmm: one packed-GEMM problem per batch index (broadcast batches are stride-0 views and cost
// nothing), all batches in one parallel region; up to kMatmulRowsMax rows, unpacked row sums instead.
//
// complex64 runs as one real GEMM of twice the size per batch: a's interleaved (re, im) pairs are read as a real
// [M, 2K] matrix, b is expanded into the real [2K, 2N] matrix of 2x2 blocks [[br, bi], [-bi, br]], and the real
// [M, 2N] product is exactly out's interleaved (re, im) pairs. That is the 4-real-product method (no 3M
// cancellation): each output part is an f32 dot product of length 2K, error <= ~2K * 2^-24 * sum |a||b|.
#include <algorithm>
#include <map>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/gemm.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

using MatmulRowsFn = void (*)(const MatmulRowsPlan&, int64_t, int64_t);

bool real_type(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

// Element offsets (in elements of each tensor) of batch index `flat` of out's batch dims.
struct BatchOffsets {
  int64_t a = 0, b = 0, out = 0;
};

BatchOffsets batch_offsets(const MatmulArgs& args, int64_t flat) {
  BatchOffsets o;
  for (int d = args.out.dim() - 3; d >= 0; --d) {
    const int64_t size = args.out.size(d), i = flat % size;
    flat /= size;
    o.a += i * args.a.stride(d);
    o.b += i * args.b.stride(d);
    o.out += i * args.out.stride(d);
  }
  return o;
}

// b's [K, N] complex matrix at `b` (strides in complex elements) as the real [2K, 2N] block matrix.
void expand_complex_b(const float* b, int64_t rs, int64_t cs, int64_t k, int64_t n, float* dst) {
  for (int64_t i = 0; i < k; ++i) {
    float* re_row = dst + (2 * i) * 2 * n;
    float* im_row = re_row + 2 * n;
    for (int64_t j = 0; j < n; ++j) {
      const float br = b[2 * (i * rs + j * cs)], bi = b[2 * (i * rs + j * cs) + 1];
      re_row[2 * j] = br;
      re_row[2 * j + 1] = bi;
      im_row[2 * j] = -bi;
      im_row[2 * j + 1] = br;
    }
  }
}

// At most kMatmulRowsMax rows with B and out unit-stride along N: no packing (there is no reuse to pay for it;
// complex64's expanded B would be 4x b's size), one parallel region over every batch's column tiles.
bool small_m(const MatmulArgs& a, int64_t m, int64_t n) {
  return m <= kMatmulRowsMax && (n <= 1 || (a.b.stride(-1) == 1 && a.out.stride(-1) == 1));
}

void matmul_small_m(const MatmulArgs& args, int64_t m, int64_t n, int64_t k, int64_t batches, MatmulRowsFn rows) {
  const bool complex = args.a.dtype() == DType::complex64;
  const int64_t es = static_cast<int64_t>(dtype_size(args.a.dtype()));
  const int64_t tile = complex ? kMatmulRowsTile / 2 : kMatmulRowsTile;   // columns
  const int64_t tiles = (n + tile - 1) / tile;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, m * k * std::min(n, tile)));
  parallel_for(0, batches * tiles, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const BatchOffsets o = batch_offsets(args, t / tiles);
      const int64_t n0 = (t % tiles) * tile;
      const MatmulRowsPlan plan{m, k, complex, complex ? RowType::f32 : row_type(args.a.dtype(), "matmul", "a"),
                                static_cast<const uint8_t*>(args.a.data()) + o.a * es, args.a.stride(-2), args.a.stride(-1),
                                static_cast<const uint8_t*>(args.b.data()) + o.b * es, args.b.stride(-2),
                                static_cast<uint8_t*>(args.out.data()) + o.out * es, args.out.stride(-2)};
      rows(plan, n0, std::min(n, n0 + tile));
    }
  });
}

// Real f32 / bf16 / f16 and complex64, any strides and broadcast batches.
bool matmul_covers(const MatmulArgs& a) {
  const DType t = a.a.dtype();
  if (t == DType::complex64) return a.out.size(-1) <= 1 || a.out.stride(-1) == 1;
  return real_type(t);
}

void matmul(const MatmulArgs& args, const GemmPieces& pieces, MatmulRowsFn rows) {
  const int64_t m = args.out.size(-2), n = args.out.size(-1), k = args.a.size(-1);
  const int64_t batches = m == 0 || n == 0 ? 0 : args.out.numel() / (m * n);
  if (batches > 0 && small_m(args, m, n)) return matmul_small_m(args, m, n, k, batches, rows);
  std::vector<GemmProblem> problems;
  problems.reserve(batches);
  if (args.a.dtype() != DType::complex64) {
    const int64_t es = static_cast<int64_t>(dtype_size(args.a.dtype()));
    const RowType type = row_type(args.a.dtype(), "matmul", "a");
    for (int64_t b = 0; b < batches; ++b) {
      const BatchOffsets o = batch_offsets(args, b);
      problems.push_back({m, n, k,
                          {static_cast<const uint8_t*>(args.a.data()) + o.a * es, type, args.a.stride(-2), args.a.stride(-1)},
                          {static_cast<const uint8_t*>(args.b.data()) + o.b * es, type, args.b.stride(-2), args.b.stride(-1)},
                          {static_cast<uint8_t*>(args.out.data()) + o.out * es, type, args.out.stride(-2),
                           args.out.stride(-1), nullptr, RowType::f32, 0}});
    }
    gemm(problems, pieces);
    return;
  }
  // complex64: a must have unit stride along K to be read as real pairs; copy it once when it has not.
  const Tensor a = args.a.size(-1) <= 1 || args.a.stride(-1) == 1 ? args.a : args.a.contiguous();
  const MatmulArgs view{a, args.b, args.out};
  // By b's batch offset: broadcast batches share one expansion. From the allocator, so the memory record sees it.
  std::map<int64_t, Tensor> expanded;
  for (int64_t b = 0; b < batches; ++b) {
    const BatchOffsets o = batch_offsets(view, b);
    Tensor& big = expanded[o.b];
    if (!big.defined()) {
      big = Tensor::empty({std::max<int64_t>(1, 4 * k * n)}, DType::f32);
      expand_complex_b(static_cast<const float*>(args.b.data()) + 2 * o.b, args.b.stride(-2), args.b.stride(-1), k, n,
                       big.data_as<float>());
    }
    problems.push_back({m, 2 * n, 2 * k,
                        {reinterpret_cast<const uint8_t*>(static_cast<const float*>(a.data()) + 2 * o.a), RowType::f32,
                         2 * a.stride(-2), 1},
                        {reinterpret_cast<const uint8_t*>(big.data_as<float>()), RowType::f32, 2 * n, 1},
                        {reinterpret_cast<uint8_t*>(static_cast<float*>(args.out.data()) + 2 * o.out), RowType::f32,
                         2 * args.out.stride(-2), 1, nullptr, RowType::f32, 0}});
  }
  gemm(problems, pieces);
}

}  // namespace

#define ENTRIES(isa)                                            \
  static constexpr GemmPieces gemm = FOURFOLD_GEMM_PIECES(isa); \
  t.matmul = {[](const MatmulArgs& a) { matmul(a, gemm, &isa::matmul_rows); }, &matmul_covers};
FOURFOLD_CPU_KERNELS(matmul, ENTRIES)

}  // namespace fourfold::cpu
