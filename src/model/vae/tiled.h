// Spatial tiling with overlap blending, as diffusers' AutoencoderKLWan.tiled_decode / tiled_encode do it: the
// input is cut into tiles of `tile` pixels every `stride`, each tile is run on its own, and each output tile
// is blended linearly with the one above and the one to its left over the overlap before its
// stride x stride corner goes into the result. Only the row above is kept, so memory holds two rows of
// tiles, not the whole grid.
#pragma once

#include <cstdint>
#include <functional>

#include "fourfold/tensor.h"

namespace fourfold::model {

struct TileGrid {
  int64_t in_tile = 0, in_stride = 0;   // tile size and step in the input's pixels
  int64_t out_stride = 0;               // the step in the output's pixels (in_stride times the scale)
  int64_t out_blend = 0;                // overlap blended in the output (out tile - out_stride)
  int64_t out_height = 0, out_width = 0;
};

// input [B, C, T, H, W]; run(tile, index, count) returns the tile's output [B, C', T', h', w'] (f32 or bf16).
// Returns [B, C', T', out_height, out_width] in f32.
Tensor run_tiled(const Tensor& input, const TileGrid& grid,
                 const std::function<Tensor(const Tensor&, int64_t, int64_t)>& run);

// How many tiles run_tiled makes for an input of h x w.
int64_t tile_count(int64_t h, int64_t w, const TileGrid& grid);

}  // namespace fourfold::model
