#include "model/vae/tiled.h"

#include <algorithm>
#include <vector>

#include "fourfold/errors.h"

namespace fourfold::model {
namespace {

// Views of a contiguous f32 [B, C, T, H, W] tile as planes of H x W.
struct Planes {
  float* data;
  int64_t planes, h, w;
  float& at(int64_t p, int64_t y, int64_t x) const { return data[(p * h + y) * w + x]; }
};

Planes planes_of(Tensor& t) {
  return {static_cast<float*>(t.data()), t.size(0) * t.size(1) * t.size(2), t.size(3), t.size(4)};
}

// diffusers' blend_v: the first `extent` rows of b fade in from the last `extent` rows of a.
void blend_rows(Tensor& above, Tensor& b, int64_t extent) {
  const Planes pa = planes_of(above), pb = planes_of(b);
  extent = std::min({pa.h, pb.h, extent});
  const int64_t w = std::min(pa.w, pb.w);
  for (int64_t p = 0; p < pb.planes; ++p)
    for (int64_t y = 0; y < extent; ++y) {
      const double f = static_cast<double>(y) / static_cast<double>(extent);
      for (int64_t x = 0; x < w; ++x)
        pb.at(p, y, x) = static_cast<float>(pa.at(p, pa.h - extent + y, x) * (1 - f) + pb.at(p, y, x) * f);
    }
}

// diffusers' blend_h: the same across columns.
void blend_columns(Tensor& left, Tensor& b, int64_t extent) {
  const Planes pa = planes_of(left), pb = planes_of(b);
  extent = std::min({pa.w, pb.w, extent});
  const int64_t h = std::min(pa.h, pb.h);
  for (int64_t p = 0; p < pb.planes; ++p)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < extent; ++x) {
        const double f = static_cast<double>(x) / static_cast<double>(extent);
        pb.at(p, y, x) = static_cast<float>(pa.at(p, y, pa.w - extent + x) * (1 - f) + pb.at(p, y, x) * f);
      }
}

int64_t steps(int64_t size, int64_t stride) { return (size + stride - 1) / stride; }

}  // namespace

int64_t tile_count(int64_t h, int64_t w, const TileGrid& g) { return steps(h, g.in_stride) * steps(w, g.in_stride); }

Tensor run_tiled(const Tensor& input, const TileGrid& g,
                 const std::function<Tensor(const Tensor&, int64_t, int64_t)>& run) {
  if (input.dim() != 5) fail<ShapeError>("run_tiled", "input", "[B, C, T, H, W]", shape_string(input.shape()));
  if (g.in_tile < 1 || g.in_stride < 1 || g.in_stride > g.in_tile || g.out_stride < 1 || g.out_blend < 0)
    fail<ValueError>("run_tiled", "tiles", "1 <= stride <= tile, out_stride >= 1, out_blend >= 0",
                     std::to_string(g.in_tile) + " / " + std::to_string(g.in_stride));
  const int64_t h = input.size(3), w = input.size(4);
  const int64_t rows = steps(h, g.in_stride), cols = steps(w, g.in_stride), count = rows * cols;
  Tensor out;
  std::vector<Tensor> above, current;
  for (int64_t r = 0; r < rows; ++r) {
    current.clear();
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t y0 = r * g.in_stride, x0 = c * g.in_stride;
      const Tensor in = input.narrow(3, y0, std::min(g.in_tile, h - y0)).narrow(4, x0, std::min(g.in_tile, w - x0));
      Tensor tile = run(in.contiguous(), r * cols + c, count).to(DType::f32).contiguous().clone();
      if (!out.defined()) {
        Shape shape = tile.shape();
        shape[3] = g.out_height;
        shape[4] = g.out_width;
        out = Tensor::zeros(shape, DType::f32);
      }
      if (r > 0) blend_rows(above[static_cast<size_t>(c)], tile, g.out_blend);
      if (c > 0) blend_columns(current.back(), tile, g.out_blend);
      const int64_t oy = r * g.out_stride, ox = c * g.out_stride;
      const int64_t th = std::min({g.out_stride, tile.size(3), g.out_height - oy});
      const int64_t tw = std::min({g.out_stride, tile.size(4), g.out_width - ox});
      if (th > 0 && tw > 0) out.narrow(3, oy, th).narrow(4, ox, tw).copy_from(tile.narrow(3, 0, th).narrow(4, 0, tw));
      current.push_back(std::move(tile));
    }
    above.swap(current);
  }
  return out;
}

}  // namespace fourfold::model
