// The 64-byte tile configuration LDTILECFG reads (palette 1), shared by the AMX GEMM and the AMX roofline
// probe: both use eight tiles of 16 rows of 64 bytes (C 0-3, A 4-5, B 6-7).
#pragma once

#include <cstdint>

#if defined(__AMX_TILE__)
#include <immintrin.h>
#endif

namespace fourfold::cpu {

struct alignas(64) AmxTileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tiles 0-7 at 16 rows of 64 bytes, the rest unused.
inline AmxTileConfig amx_eight_full_tiles() {
  AmxTileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  return cfg;
}

#if defined(__AMX_TILE__)
// Loads amx_eight_full_tiles() into this thread's tile configuration (the amx level's kernel files).
inline void load_eight_full_tiles() {
  const AmxTileConfig cfg = amx_eight_full_tiles();
  _tile_loadconfig(&cfg);
}
#endif

}  // namespace fourfold::cpu
