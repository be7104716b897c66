// Dedicated softmax / log_softmax over the last dim: rows in parallel, or one long row split over threads.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernel_types.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

// The level's softmax loops (kernels/kernels.h).
struct SoftmaxPieces {
  RowStats (*stats)(const void*, RowType, int64_t, float*, float*);
  void (*write)(const void*, void*, RowType, int64_t, float, float, bool, bool);
  void (*write_kept)(const float*, const float*, void*, RowType, int64_t, float, float, bool);
};

constexpr int64_t kSplitMin = 16384;   // elements of a row below which splitting it costs more than it gains
constexpr int kMaxChunks = 64;

// Chunks' statistics merged by rescaling each sum to the common max (a chunk at -inf adds nothing).
RowStats merge(const RowStats* st, int count) {
  RowStats r{-std::numeric_limits<float>::infinity(), 0.0, false};
  for (int c = 0; c < count; ++c) {
    r.max = std::max(r.max, st[c].max);
    r.nan = r.nan || st[c].nan;
  }
  for (int c = 0; c < count; ++c)
    r.sum += st[c].max == r.max ? st[c].sum : st[c].sum * std::exp(static_cast<double>(st[c].max) - r.max);
  return r;
}

struct Finish {
  float scale;
  bool nan;
};

// All -inf (0/0), a NaN, or +inf (inf - inf in the sum) make the whole row NaN, as the reference.
Finish finish(const RowStats& st, bool log) {
  const bool nan = st.nan || st.max == -std::numeric_limits<float>::infinity() || !std::isfinite(st.sum);
  return {static_cast<float>(log ? std::log(st.sum) : 1.0 / st.sum), nan};
}

// Contiguous rows along the last dim, f32 / bf16 / f16.
bool softmax_covers(const SoftmaxArgs& a) {
  const DType t = a.x.dtype();
  return (t == DType::f32 || t == DType::bf16 || t == DType::f16) && a.dim == a.x.dim() - 1 && a.x.is_contiguous() &&
         a.out.is_contiguous() && a.out.dtype() == t;
}

void softmax(const SoftmaxArgs& a, bool log, const SoftmaxPieces& k) {
  const int64_t numel = a.x.numel();
  if (numel == 0) return;
  const int64_t n = a.x.size(a.dim);
  const int64_t rows = numel / n;
  const RowType type = a.x.dtype() == DType::f32 ? RowType::f32 : a.x.dtype() == DType::bf16 ? RowType::bf16 : RowType::f16;
  const int64_t es = static_cast<int64_t>(dtype_size(a.x.dtype()));
  const uint8_t* x = static_cast<const uint8_t*>(a.x.data());
  uint8_t* out = static_cast<uint8_t*>(a.out.data());
  const int threads = num_threads();

  // softmax keeps the stats pass's exps (f32, from the allocator: one slot per chunk of work, reused across its
  // rows) so that its write pass needs one exp per block, not a second one per element: exp, not memory, bounds
  // both passes on rows that fit in cache. log_softmax's write pass has no exp to save (null slots).
  struct Kept {
    float* exps = nullptr;
    float* shifts = nullptr;
  };
  const auto kept_buffer = [&](int64_t slots, int64_t len) {
    return log ? Tensor() : Tensor::empty({slots * 2 * softmax_kept_floats(len)}, DType::f32);
  };
  const auto kept_slot = [&](const Tensor& buf, int64_t slot, int64_t len) {
    if (!buf.defined()) return Kept{};
    float* exps = buf.data_as<float>() + slot * 2 * softmax_kept_floats(len);
    return Kept{exps, exps + softmax_kept_floats(len)};
  };
  // The write pass of one row (or one chunk of a split row) from its (merged) statistics.
  const auto write = [&](const Kept& kept, const uint8_t* xc, uint8_t* outc, int64_t count, const RowStats& st) {
    const Finish f = finish(st, log);
    if (kept.exps != nullptr) k.write_kept(kept.exps, kept.shifts, outc, type, count, st.max, f.scale, f.nan);
    else k.write(xc, outc, type, count, st.max, f.scale, log, f.nan);
  };

  if (rows >= threads || n < 2 * kSplitMin) {
    const int64_t grain = std::max<int64_t>(1, 16384 / n);
    parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
      const Tensor buf = kept_buffer(1, n);
      const Kept kept = kept_slot(buf, 0, n);
      for (int64_t r = begin; r < end; ++r)
        write(kept, x + r * n * es, out + r * n * es, n, k.stats(x + r * n * es, type, n, kept.exps, kept.shifts));
    });
    return;
  }

  // Fewer rows than threads and long rows: each row's chunks in parallel, merged, then written in parallel.
  const int chunks = static_cast<int>(std::min<int64_t>({kMaxChunks, threads, n / kSplitMin}));
  const int64_t len = ((n + chunks - 1) / chunks + 63) / 64 * 64;
  RowStats st[kMaxChunks];
  const Tensor buf = kept_buffer(chunks, len);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* xr = x + r * n * es;
    uint8_t* outr = out + r * n * es;
    parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t start = std::min(n, c * len);
        const Kept kept = kept_slot(buf, c, len);
        st[c] = k.stats(xr + start * es, type, std::min(n, start + len) - start, kept.exps, kept.shifts);
      }
    });
    const RowStats merged = merge(st, chunks);
    parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t start = std::min(n, c * len);
        write(kept_slot(buf, c, len), xr + start * es, outr + start * es, std::min(n, start + len) - start, merged);
      }
    });
  }
}

}  // namespace

#define ENTRIES(isa)                                                                                         \
  static constexpr SoftmaxPieces pieces{&isa::softmax_stats, &isa::softmax_write, &isa::softmax_write_kept}; \
  t.softmax = {[](const SoftmaxArgs& a) { softmax(a, false, pieces); }, &softmax_covers};                    \
  t.log_softmax = {[](const SoftmaxArgs& a) { softmax(a, true, pieces); }, &softmax_covers};
FOURFOLD_CPU_KERNELS(softmax, ENTRIES)

}  // namespace fourfold::cpu
