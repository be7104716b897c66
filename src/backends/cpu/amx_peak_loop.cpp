#include "backends/cpu/amx_peak_loop.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/amx_tile_config.h"

namespace fourfold::cpu {

#if defined(__x86_64__)
// TDPBF16PS on four C tiles from two A and two B tiles that stay in the unit: 16 x 16 x 32 multiply-adds each.
// Each C element grows by 32 * 2^-20 per instruction: normal, far from overflow for any run length.
__attribute__((target("amx-tile,amx-bf16"))) float amx_dot_loop(int64_t iters, int64_t* flops_per_iter) {
  *flops_per_iter = 4 * 16 * 16 * 32 * 2;
  const AmxTileConfig cfg = amx_eight_full_tiles();
  alignas(64) uint16_t ones[16 * 32];
  std::fill(ones, ones + 16 * 32, uint16_t{0x3a80});   // bf16 2^-10
  alignas(64) float c[16 * 16];
  _tile_loadconfig(&cfg);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, ones, 64);
  _tile_loadd(5, ones, 64);
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  for (int64_t i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  float s = 0.0f;
  _tile_stored(0, c, 64);
  s += c[0];
  _tile_stored(3, c, 64);
  s += c[255];
  _tile_release();
  return s;
}
#endif

}  // namespace fourfold::cpu
