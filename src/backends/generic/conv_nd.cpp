// Generic conv2d / conv3d, as a graph lowering composes them: x to f32, zero padding (fill + copy), then per
// band of output rows im2col (one strided slice-and-copy per kernel offset into a [N, C, prod(kernel),
// positions] temporary), per batch element one batched matrix product over the groups (weight [G, O/G,
// C/G * prod(kernel)] times the columns), a separate bias pass and one conversion into the output. The bands
// bound the im2col temporary to about kColumnsBytes, as a memory-aware lowering does: a whole 480x832 Wan
// VAE layer's columns would take 16 GB.
#include <algorithm>
#include <vector>

#include "backends/generic/generic.h"
#include "backends/generic/generic_registration.h"
#include "backends/generic/primitives.h"

namespace fourfold::generic {
namespace {

constexpr int64_t kColumnsBytes = int64_t{32} << 20;

// x (f32) zero-padded by `padding` on both sides of every spatial dim; x itself without padding.
Tensor padded(const Tensor& x, const std::vector<int64_t>& padding) {
  if (std::all_of(padding.begin(), padding.end(), [](int64_t p) { return p == 0; })) return x;
  Shape shape = x.shape();
  for (size_t d = 0; d < padding.size(); ++d) shape[2 + d] += 2 * padding[d];
  Tensor xp = empty_f32(shape);
  fill(xp, 0.0);
  Tensor interior = xp;
  for (size_t d = 0; d < padding.size(); ++d)
    interior = interior.narrow(2 + static_cast<int>(d), padding[d], x.size(2 + static_cast<int>(d)));
  copy(x, interior);
  return xp;
}

// cols[n, c, k, p] = xp[n, c, o * stride + k * dilation] for kernel offset k and output position o of `out`
// (the output's spatial sizes, flattened to p): one strided view of the padded input per kernel offset.
Tensor im2col(const Tensor& xp, const Shape& kernel, const Shape& out, const ConvArgs& a) {
  const int spatial = static_cast<int>(kernel.size());
  int64_t taps = 1, positions = 1;
  for (int d = 0; d < spatial; ++d) {
    taps *= kernel[d];
    positions *= out[d];
  }
  Tensor cols = empty_f32({xp.size(0), xp.size(1), taps, positions});
  Shape dst_shape = {xp.size(0), xp.size(1)};
  dst_shape.insert(dst_shape.end(), out.begin(), out.end());
  std::vector<int64_t> k(spatial, 0);
  for (int64_t tap = 0; tap < taps; ++tap) {
    Tensor src = xp;
    for (int d = 0; d < spatial; ++d) {
      const int64_t start = k[d] * a.dilation[d];
      src = src.slice(2 + d, start, start + (out[d] - 1) * a.stride[d] + 1, a.stride[d]);
    }
    Tensor dst = cols.select(2, tap).view(dst_shape);
    copy(src, dst);
    for (int d = spatial - 1; d >= 0 && ++k[d] == kernel[d]; --d) k[d] = 0;   // the next offset, last dim fastest
  }
  return cols;
}

// out_band = conv(xp_band) for an input band that holds exactly the windows of out_band's positions.
void conv_band(const Tensor& xp, const Tensor& w, const Tensor* bias, const Shape& kernel, const ConvArgs& a,
               Tensor& out_band) {
  const int64_t n = out_band.size(0), o = out_band.size(1), g = a.groups;
  const Shape out(out_band.shape().begin() + 2, out_band.shape().end());
  const Tensor cols = im2col(xp, kernel, out, a);
  const int64_t positions = cols.size(3), depth = w.numel() / o;   // depth: C / G * prod(kernel)
  Tensor product = empty_f32({n, o, positions});
  for (int64_t b = 0; b < n; ++b)
    gemm_nn(w.data_as<float>(), cols.data_as<float>() + b * g * depth * positions,
            product.data_as<float>() + b * o * positions, o / g, positions, depth, g);
  Tensor result = product;
  if (bias != nullptr) {
    result = empty_f32(product.shape());
    for (int64_t b = 0; b < n; ++b)
      binary(Binary::add, product.data_as<float>() + b * o * positions, bias->data_as<float>(), Broadcast::per_row,
             result.data_as<float>() + b * o * positions, o, positions);
  }
  from_f32(result.view(out_band.shape()), out_band);
}

}  // namespace

void conv_in_bands(const ConvArgs& a, int64_t columns_bytes) {
  if (a.out.numel() == 0) return;
  const int rank = a.x.dim(), spatial = rank - 2, band_dim = rank - 2;   // bands of the second-last dim's rows
  const Shape kernel(a.weight.shape().begin() + 2, a.weight.shape().end());
  const Tensor xp = padded(to_f32(a.x), a.padding);
  const Tensor w = to_f32(a.weight);
  Tensor bias;
  if (a.bias != nullptr) bias = to_f32(*a.bias);
  int64_t taps = 1;
  for (int64_t k : kernel) taps *= k;
  const int64_t row_bytes = a.x.size(0) * a.x.size(1) * taps * a.out.size(-1) * 4;
  const int64_t band = std::clamp<int64_t>(columns_bytes / std::max<int64_t>(row_bytes, 1), 1, a.out.size(band_dim));
  // Every index of the dims before the band dim (conv3d's output frames), each band of rows.
  const int outer = spatial - 2;
  std::vector<int64_t> index(outer, 0);
  while (true) {
    for (int64_t h0 = 0; h0 < a.out.size(band_dim); h0 += band) {
      const int64_t rows = std::min(band, a.out.size(band_dim) - h0);
      Tensor x_band = xp, out_band = a.out;
      for (int d = 0; d < outer; ++d) {
        x_band = x_band.narrow(2 + d, index[d] * a.stride[d], (kernel[d] - 1) * a.dilation[d] + 1);
        out_band = out_band.narrow(2 + d, index[d], 1);
      }
      const int b = band_dim - 2;
      x_band = x_band.narrow(band_dim, h0 * a.stride[b], (rows - 1) * a.stride[b] + (kernel[b] - 1) * a.dilation[b] + 1);
      out_band = out_band.narrow(band_dim, h0, rows);
      conv_band(x_band, w, a.bias != nullptr ? &bias : nullptr, kernel, a, out_band);
    }
    int d = outer - 1;
    for (; d >= 0 && ++index[d] == a.out.size(2 + d); --d) index[d] = 0;
    if (d < 0) break;
  }
}

namespace {

bool conv_covers(const ConvArgs& a) { return computes(a.x.dtype()); }

void conv(const ConvArgs& a) { conv_in_bands(a, kColumnsBytes); }

}  // namespace

FOURFOLD_GENERIC_KERNELS(conv_nd) {
  t.conv2d = entry(&conv, &conv_covers);
  t.conv3d = entry(&conv, &conv_covers);
}

}  // namespace fourfold::generic
