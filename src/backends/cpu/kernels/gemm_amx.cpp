// The GEMM's AMX path (the amx level): bf16 operands on Intel's tile matrix unit. One TDPBF16PS multiplies a
// 16 x 32 bf16 A tile by a 32 x 16 B tile (k pairs) into a 16 x 16 f32 C tile: 8,192 products, where a zmm
// vdpbf16ps makes 32. The register block is 32 x 32 (four C tiles), fed per 32 k by two A and two B tiles.
//
// Layouts (the driver packs, gemm.cpp): A is a plain row-major bf16 block [rows rounded up to 16][kc rounded up
// to 32], zero padded, so one tile load takes 16 rows of 32 k. B is gemm.cpp's pair panels of nr = 32 columns,
// each step (one k pair) 32 uint32s = two tile rows side by side, with the steps padded to 16 (zeros).
//
// The direct path (few rows against a bf16 weight, the weight's rows as the tiles where they lie) is in
// gemm_direct.cpp, with its AMX block.
//
// Precision: bf16 products are exact in f32 and accumulate in f32, as on the pair path; the unit treats
// subnormal inputs and results as zero, as vdpbf16ps does. At levels without AMX the blocks are scalar
// emulations of the same layouts (tests run them on every host).
#include <algorithm>
#include <cstring>

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/amx_tile_config.h"
#include "backends/cpu/kernels/kernels.h"
#include "fourfold/dtype.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

constexpr int64_t kTileK = 32;      // bf16 elements per A tile row (64 bytes)
constexpr int64_t kTileRows = 16;   // rows of every tile

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
// Tiles 0-3: C (row tile i, column tile j at 2i + j); 4, 5: A; 6, 7: B. Every tile 16 rows of 64 bytes.
inline void configure_tiles() {
  static_assert(kTileRows == 16);
  load_eight_full_tiles();
}

// C [16 * R, 32] (row stride c_ld bytes) += A [16 * R, 32 * chunks] (row stride a_ld bytes) times one B panel.
template <int R>
void tile_block(const uint8_t* a, int64_t a_ld, const uint8_t* b, int64_t chunks, float* c, int64_t c_ld, bool load) {
  auto* c1 = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(c) + kTileRows * c_ld);
  if (load) {
    _tile_loadd(0, c, c_ld);
    _tile_loadd(1, c + 16, c_ld);
    if constexpr (R == 2) {
      _tile_loadd(2, c1, c_ld);
      _tile_loadd(3, c1 + 16, c_ld);
    }
  } else {
    _tile_zero(0);
    _tile_zero(1);
    if constexpr (R == 2) {
      _tile_zero(2);
      _tile_zero(3);
    }
  }
  constexpr int64_t kStepBytes = 128;   // one k pair of a 32-column panel
  for (int64_t ch = 0; ch < chunks; ++ch) {
    const uint8_t* bk = b + ch * kTileRows * kStepBytes;
    _tile_loadd(4, a + ch * kTileK * 2, a_ld);
    _tile_loadd(6, bk, kStepBytes);
    _tile_loadd(7, bk + 64, kStepBytes);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    if constexpr (R == 2) {
      _tile_loadd(5, a + kTileRows * a_ld + ch * kTileK * 2, a_ld);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, c, c_ld);
  _tile_stored(1, c + 16, c_ld);
  if constexpr (R == 2) {
    _tile_stored(2, c1, c_ld);
    _tile_stored(3, c1 + 16, c_ld);
  }
}

#endif

}  // namespace

bool gemm_amx_fast() {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  return true;
#else
  return false;
#endif
}

void gemm_pack_a_amx(const GemmOperand& a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, float* dst) {
  const int64_t width = round_up(kc, kTileK);
  auto* out = reinterpret_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < round_up(mc, kTileRows); ++i, out += width) {
    int64_t d = 0;
    if (i < mc) {
      const uint8_t* row = a.data + ((m0 + i) * a.rs + k0 * a.cs) * 2;
      if (a.cs == 1) {
        std::memcpy(out, row, static_cast<size_t>(kc) * 2);
        d = kc;
      } else {
        for (; d < kc; ++d) std::memcpy(out + d, row + d * a.cs * 2, 2);
      }
    }
    std::fill(out + d, out + width, uint16_t{0});
  }
}

void gemm_block_amx(const float* pa, const float* pb, int64_t mc, int64_t nc, int64_t kc, float* c, int64_t ldc,
                    bool accumulate) {
  const int64_t width = round_up(kc, kTileK), chunks = width / kTileK, steps = chunks * kTileRows;
  const int64_t nr = gemm_nr();
  const auto* a = reinterpret_cast<const uint8_t*>(pa);
  const auto* b = reinterpret_cast<const uint8_t*>(pb);
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  configure_tiles();
  alignas(64) float tmp[2 * kTileRows * 32];
  for (int64_t j = 0; j < nc; j += nr) {
    const uint8_t* panel = b + j * steps * 4;
    const int64_t cols = std::min<int64_t>(nr, nc - j);
    for (int64_t i = 0; i < mc; i += 2 * kTileRows) {
      const int64_t rows = std::min<int64_t>(2 * kTileRows, mc - i);
      const uint8_t* ai = a + i * width * 2;
      float* ci = c + i * ldc + j;
      const bool two = rows > kTileRows;
      if (rows == 2 * kTileRows && cols == nr) {
        tile_block<2>(ai, width * 2, panel, chunks, ci, ldc * 4, accumulate);
        continue;
      }
      // Edge: through a whole 32 x 32 tile (the padding rows and columns compute zeros), then its valid part.
      std::fill(tmp, tmp + 2 * kTileRows * 32, 0.0f);
      if (accumulate)
        for (int64_t r = 0; r < rows; ++r) std::memcpy(tmp + r * 32, ci + r * ldc, static_cast<size_t>(cols) * 4);
      if (two) tile_block<2>(ai, width * 2, panel, chunks, tmp, 128, true);
      else tile_block<1>(ai, width * 2, panel, chunks, tmp, 128, true);
      for (int64_t r = 0; r < rows; ++r) std::memcpy(ci + r * ldc, tmp + r * 32, static_cast<size_t>(cols) * 4);
    }
  }
  _tile_release();
#else
  // The same layouts, one product pair at a time in f32 (even k first, as the unit's pseudo-code orders them).
  const auto* a16 = reinterpret_cast<const uint16_t*>(a);
  const auto* b32 = reinterpret_cast<const uint32_t*>(b);
  for (int64_t i = 0; i < mc; ++i)
    for (int64_t j = 0; j < nc; ++j) {
      const uint32_t* panel = b32 + (j / nr) * steps * nr + j % nr;
      float sum = accumulate ? c[i * ldc + j] : 0.0f;
      for (int64_t p = 0; p < steps; ++p) {
        const uint32_t pair = panel[p * nr];
        sum += bf16_to_f32(a16[i * width + 2 * p]) * bf16_to_f32(static_cast<uint16_t>(pair));
        sum += bf16_to_f32(a16[i * width + 2 * p + 1]) * bf16_to_f32(static_cast<uint16_t>(pair >> 16));
      }
      c[i * ldc + j] = sum;
    }
#endif
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
