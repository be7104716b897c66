// The threading of the dedicated elementwise passes (silu_mul, sigmoid): [0, n) in chunks over the threads.
#pragma once

#include <algorithm>
#include <cstdint>

#include "fourfold/parallel.h"

namespace fourfold::cpu {

// Elements per work item: a multiple of every vector width, so that only the last chunk has a tail.
inline constexpr int64_t kElementwiseChunk = 16384;

// fn(start, stop) for consecutive element ranges covering [0, n), in parallel.
template <class Fn>
void for_each_elementwise_chunk(int64_t n, const Fn& fn) {
  parallel_for(0, (n + kElementwiseChunk - 1) / kElementwiseChunk, 1, [&](int64_t begin, int64_t end) {
    fn(begin * kElementwiseChunk, std::min(n, end * kElementwiseChunk));
  });
}

}  // namespace fourfold::cpu
