// parallel_for over a persistent thread pool (why a pool and not OpenMP: docs/parallel_for.md).
#pragma once

#include <cstdint>
#include <functional>

namespace fourfold {

// Threads used by parallel_for, the caller included. Default: FOURFOLD_THREADS if set, else the number of
// online CPUs. set_num_threads(n) with n >= 1 resizes the pool; ValueError for n < 1.
int num_threads();
void set_num_threads(int n);

// Splits [begin, end) into at most num_threads() contiguous chunks of at least `grain` items and calls
// fn(chunk_begin, chunk_end) once per chunk; the caller runs the first chunk. Returns when all are done.
// An exception thrown by fn is rethrown in the caller (the first one, if several). Nested calls run serially.
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// A host's own threads in place of the pool. A library that embeds fourfold (the PyTorch extension) passes its
// intra-op threads, so that two sets of workers never spin against each other on the same cores: run(chunks,
// chunk) calls chunk(c) once for every c in [0, chunks), on any of its threads, and returns when all are done
// (rethrowing an exception of one); threads() is its thread count, which num_threads() then returns. The
// chunks are parallel_for's own, so results are the same bits on either. nullptr: the pool again.
struct HostThreads {
  int (*threads)();
  void (*run)(int chunks, const std::function<void(int)>& chunk);
};
void use_host_threads(const HostThreads* host);

}  // namespace fourfold
