// constant_pad_nd's per-ISA loop (constant_pad_nd.cpp beside this file) and the plan it reads.
#pragma once

#include "backends/cpu/kernels/kernels.h"

namespace fourfold::cpu {

inline constexpr int kPadMaxRank = 8;

// constant_pad_nd after dims are coalesced: the output (contiguous) is rows of out_size[rank-1] elements;
// dim d of the output maps to input index o - before[d] when that lies in [0, in_size[d]).
struct PadPlan {
  int rank;                       // >= 1
  int elem_size;                  // 1, 2, 4 or 8 bytes
  int64_t out_size[kPadMaxRank];
  int64_t in_size[kPadMaxRank];
  int64_t before[kPadMaxRank];    // negative: cropped
  int64_t in_stride[kPadMaxRank]; // elements
  const uint8_t* in;              // element [0, ..., 0] of the input
  uint8_t* out;                   // element [0, ..., 0] of the output
  uint64_t fill;                  // the fill value's bytes (low elem_size bytes)
  // -1, or an outer dim whose input stride is 1 while the row's is not (channels-last): then the work items
  // are tiles of kPadTileBytes / elem_size consecutive rows along that dim, read across and written along.
  int tile_dim;
};

// Bytes of input per row index in one tile of the tiled layout: a tile is kPadTileBytes / elem_size rows.
inline constexpr int64_t kPadTileBytes = 64;

#define FOURFOLD_CPU_DECLARE_PAD(isa)                                                 \
  namespace isa {                                                                     \
  /* Writes work items [begin, end) of the plan (rows, or tiles), each element once. */ \
  void pad_rows(const PadPlan& plan, int64_t row_begin, int64_t row_end);             \
  }
FOURFOLD_ISA_LEVELS(FOURFOLD_CPU_DECLARE_PAD)
#undef FOURFOLD_CPU_DECLARE_PAD

}  // namespace fourfold::cpu
