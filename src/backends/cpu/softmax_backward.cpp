// Dedicated softmax / log_softmax backward over the last dim: rows in parallel, or one long row split over the
// threads (each chunk's partial dot product summed, then the chunks written in parallel), as the forward.
#include <algorithm>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernel_types.h"
#include "backends/cpu/kernels/softmax_backward.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

// The level's backward passes (kernels/softmax_backward.h).
struct SoftmaxBackwardPieces {
  double (*dot)(const void*, const void*, RowType, int64_t, bool);
  void (*write)(const void*, const void*, void*, RowType, int64_t, double, bool);
};

constexpr int64_t kSplitMin = 16384;   // elements of a row below which splitting it costs more than it gains
constexpr int kMaxChunks = 64;

bool softmax_backward_covers(const SoftmaxBackwardArgs& a) {
  const DType t = a.out.dtype();
  return (t == DType::f32 || t == DType::bf16 || t == DType::f16) && a.grad_out.dtype() == t &&
         a.grad_in.dtype() == t && a.dim == a.out.dim() - 1 && a.out.is_contiguous() && a.grad_out.is_contiguous() &&
         a.grad_in.is_contiguous();
}

void softmax_backward(const SoftmaxBackwardArgs& a, bool log, const SoftmaxBackwardPieces& k) {
  const int64_t numel = a.out.numel();
  if (numel == 0) return;
  const int64_t n = a.out.size(a.dim), rows = numel / n;
  const RowType type = row_type(a.out.dtype(), "softmax_backward", "out");
  const int64_t es = static_cast<int64_t>(dtype_size(a.out.dtype()));
  const auto* g = static_cast<const uint8_t*>(a.grad_out.data());
  const auto* y = static_cast<const uint8_t*>(a.out.data());
  auto* gi = static_cast<uint8_t*>(a.grad_in.data());
  const int threads = num_threads();

  if (rows >= threads || n < 2 * kSplitMin) {
    parallel_for(0, rows, std::max<int64_t>(1, 16384 / n), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r * n * es;
        k.write(g + o, y + o, gi + o, type, n, k.dot(g + o, y + o, type, n, log), log);
      }
    });
    return;
  }

  const int chunks = static_cast<int>(std::min<int64_t>({kMaxChunks, threads, n / kSplitMin}));
  const int64_t len = ((n + chunks - 1) / chunks + 63) / 64 * 64;
  double part[kMaxChunks];
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r * n * es;
    parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t start = std::min(n, c * len);
        part[c] = k.dot(g + o + start * es, y + o + start * es, type, std::min(n, start + len) - start, log);
      }
    });
    double dot = 0.0;
    for (int c = 0; c < chunks; ++c) dot += part[c];
    parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t start = std::min(n, c * len);
        k.write(g + o + start * es, y + o + start * es, gi + o + start * es, type, std::min(n, start + len) - start,
                dot, log);
      }
    });
  }
}

}  // namespace

#define ENTRIES(isa)                                                                                        \
  static constexpr SoftmaxBackwardPieces pieces{&isa::softmax_backward_dot, &isa::softmax_backward_write}; \
  t.softmax_backward = {[](const SoftmaxBackwardArgs& a) { softmax_backward(a, false, pieces); },           \
                        &softmax_backward_covers};                                                          \
  t.log_softmax_backward = {[](const SoftmaxBackwardArgs& a) { softmax_backward(a, true, pieces); },        \
                            &softmax_backward_covers};
FOURFOLD_CPU_KERNELS(softmax_backward, ENTRIES)

}  // namespace fourfold::cpu
