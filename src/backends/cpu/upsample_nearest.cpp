// Dedicated upsample_nearest for integer factors, spatially dense input: each input row (the last dim) is
// widened once into its first output row, which is then copied to the other rows it fills (the factors of
// the other spatial dims), so every output element is written once and every input element read once.
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_registration.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

// Dims from `first` on laid out as a contiguous tensor of their shape, whatever strides size-1 dims carry.
// The input needs this of its spatial dims only: its (N, C) planes may lie anywhere (a frame-major view of
// a [N, C, T, H, W] video, as the VAE hands over, has planes C apart).
bool dense(const Tensor& t, int first = 0) {
  int64_t expected = 1;
  for (int d = t.dim() - 1; d >= first; --d) {
    if (t.size(d) == 1) continue;
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

bool upsample_nearest_covers(const UpsampleArgs& a) {
  if (!dense(a.x, 2) || !dense(a.out) || a.x.dim() < 3) return false;
  for (int d = 2; d < a.x.dim(); ++d)
    if (a.x.size(d) == 0 || a.out.size(d) % a.x.size(d) != 0) return false;
  return true;
}

void upsample_nearest(const UpsampleArgs& a) {
  if (a.out.numel() == 0) return;
  const int rank = a.x.dim();
  const size_t es = dtype_size(a.x.dtype());
  const int64_t in_w = a.x.size(rank - 1), fw = a.out.size(rank - 1) / in_w, out_w = in_w * fw;
  // The dims between C and W: their input sizes, factors and output strides (in output rows).
  std::vector<int64_t> in_size, factor, out_rows_stride;
  int64_t out_rows = 1;
  for (int d = rank - 2; d >= 2; --d) {
    in_size.insert(in_size.begin(), a.x.size(d));
    factor.insert(factor.begin(), a.out.size(d) / a.x.size(d));
    out_rows_stride.insert(out_rows_stride.begin(), out_rows);
    out_rows *= a.out.size(d);
  }
  int64_t copies = 1, in_rows = 1;
  for (size_t k = 0; k < factor.size(); ++k) {
    copies *= factor[k];
    in_rows *= in_size[k];
  }
  const int64_t planes = a.x.size(0) * a.x.size(1);
  const char* src = static_cast<const char*>(a.x.data());
  char* dst = static_cast<char*>(a.out.data());
  parallel_for(0, planes * in_rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(out_w, 1)), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(factor.size()), rep(factor.size());
    for (int64_t row = begin; row < end; ++row) {
      const int64_t plane = row / in_rows;
      int64_t rest = row % in_rows, first = 0;
      for (size_t k = factor.size(); k-- > 0;) {
        idx[k] = rest % in_size[k];
        rest /= in_size[k];
        first += idx[k] * factor[k] * out_rows_stride[k];
      }
      const int64_t plane_offset = (plane / a.x.size(1)) * a.x.stride(0) + (plane % a.x.size(1)) * a.x.stride(1);
      const char* in = src + static_cast<size_t>(plane_offset + (row % in_rows) * in_w) * es;
      char* out0 = dst + static_cast<size_t>((plane * out_rows + first) * out_w) * es;
      for (int64_t x = 0; x < in_w; ++x)
        for (int64_t f = 0; f < fw; ++f) std::memcpy(out0 + static_cast<size_t>(x * fw + f) * es, in + static_cast<size_t>(x) * es, es);
      // The other output rows of this input row: every combination of offsets within the factors but all-zero.
      std::fill(rep.begin(), rep.end(), 0);
      for (int64_t c = 1; c < copies; ++c) {
        for (size_t k = rep.size(); k-- > 0;) {
          if (++rep[k] < factor[k]) break;
          rep[k] = 0;
        }
        int64_t offset = 0;
        for (size_t k = 0; k < rep.size(); ++k) offset += rep[k] * out_rows_stride[k];
        std::memcpy(out0 + static_cast<size_t>(offset * out_w) * es, out0, static_cast<size_t>(out_w) * es);
      }
    }
  });
}

}  // namespace

#define ENTRIES(isa)                                                 \
  t.upsample_nearest = {&upsample_nearest, &upsample_nearest_covers};
FOURFOLD_CPU_KERNELS(upsample_nearest, ENTRIES)

}  // namespace fourfold::cpu
