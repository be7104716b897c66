// The roofline's probe loops at each ISA level (probe_loops.h): the read, write and copy streams and the peak
// compute chains the check judges the kernels of the same level against.
#include "backends/cpu/kernels/probe_loops.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/amx_tile_config.h"
#include "backends/cpu/kernels/vec.h"   // kLanes, vf, splat, load, lane_sum

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

// Software prefetch distance of the read and copy streams, one line prefetched per line loaded. On a pure
// stream the hardware prefetchers already do well, and no distance from 0 (none) to 4 KiB stands out of the
// run-to-run spread (docs/records.md, Probes). It stays so that the ceiling is what a kernel using software
// prefetch (MACHINE.md: the GEMVs need it) can reach, never less.
constexpr int kPrefetchBytes = 1024;
constexpr int64_t kLine = 64;
constexpr int64_t kStep = 4 * kLanes;   // floats per unrolled step: four vectors
constexpr int64_t kVecBytes = kLanes * 4;

void prefetch_step(const float* p) {
  const char* c = reinterpret_cast<const char*>(p) + kPrefetchBytes;
  for (int64_t b = 0; b < kStep * 4; b += kLine) __builtin_prefetch(c + b);
}

// A store that bypasses the caches, p aligned to a vector.
void stream(float* p, vf v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, (__m512)v);
#elif defined(__AVX__)
  _mm256_stream_ps(p, (__m256)v);
#elif defined(__SSE__)
  _mm_stream_ps(p, (__m128)v);
#else
  std::memcpy(p, &v, sizeof v);
#endif
}

void store_fence() {
#if defined(__SSE__)
  _mm_sfence();
#endif
}

float read_stream(const float* p, int64_t n) {
  vf s0 = {}, s1 = {}, s2 = {}, s3 = {};
  int64_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    prefetch_step(p + i);
    s0 += load<RowType::f32>(p, i);
    s1 += load<RowType::f32>(p, i + kLanes);
    s2 += load<RowType::f32>(p, i + 2 * kLanes);
    s3 += load<RowType::f32>(p, i + 3 * kLanes);
  }
  float s = lane_sum((s0 + s1) + (s2 + s3));
  for (; i < n; ++i) s += p[i];
  return s;
}

// Plain stores up to the first vector-aligned address and after the last whole step (streaming stores need the
// alignment).
void write_stream(float* p, int64_t n, float v) {
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(p + i) % kVecBytes) != 0; ++i) p[i] = v;
  const vf x = splat(v);
  for (; i + kStep <= n; i += kStep)
    for (int j = 0; j < 4; ++j) stream(p + i + j * kLanes, x);
  for (; i < n; ++i) p[i] = v;
  store_fence();
}

void copy_stream(float* d, const float* s, int64_t n) {
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(d + i) % kVecBytes) != 0; ++i) d[i] = s[i];
  for (; i + kStep <= n; i += kStep) {
    prefetch_step(s + i);
    for (int j = 0; j < 4; ++j) stream(d + i + j * kLanes, load<RowType::f32>(s, i + j * kLanes));
  }
  for (; i < n; ++i) d[i] = s[i];
  store_fence();
}

// acc = acc * a + b converges to b / (1 - a) and stays a normal number: no denormal or overflow slows it.
// Enough independent chains to cover FMA latency x throughput (4 cycles x 2 per cycle on Zen 4 and most x86
// cores), and few enough that the accumulators and the two constants stay in registers (16 ymm, 32 zmm).
#if defined(__AVX512F__)
constexpr int kChains = 16;
#elif defined(__AVX2__)
constexpr int kChains = 12;
#else
constexpr int kChains = 8;
#endif

float fma_chains(int64_t iters, int64_t* flops_per_iter) {
  *flops_per_iter = 2 * kLanes * kChains;
  const vf a = splat(0.5f), b = splat(0.25f);
  vf acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = splat(static_cast<float>(j));
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = acc[j] * a + b;
  }
  vf s = acc[0];
  for (int j = 1; j < kChains; ++j) s += acc[j];
  return lane_sum(s);
}

#if defined(__AVX512BF16__)
// vdpbf16ps: two multiply-adds per f32 lane, but not always at the FMA's rate: on an Intel Xeon (family 6
// model 207, 2 vCPUs) one zmm vdpbf16ps took ~0.8 ns against ~0.17 ns per zmm FMA, so its peak was about half
// the FMA's in flops, not twice. Prefill is judged against this probe, not against 2 x the FMA. acc grows by
// 2 * 2^-20 per step: normal, far from overflow for any run length.
float bf16_dot(int64_t iters, int64_t* flops_per_iter) {
  *flops_per_iter = 4 * 16 * kChains;
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3a80);   // bf16 2^-10
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], a, a);
  }
  vf s = (vf)acc[0];
  for (int j = 1; j < kChains; ++j) s += (vf)acc[j];
  return lane_sum(s);
}
#endif

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
// TDPBF16PS on four C tiles from two A and two B tiles that stay in the unit, on the AMX GEMM's tile layout:
// 16 x 16 x 32 multiply-adds each. Each C element grows by 32 * 2^-20 per instruction: normal, far from
// overflow for any run length.
float amx_dot(int64_t iters, int64_t* flops_per_iter) {
  *flops_per_iter = 4 * 16 * 16 * 32 * 2;
  alignas(64) uint16_t ones[16 * 32];
  std::fill(ones, ones + 16 * 32, uint16_t{0x3a80});   // bf16 2^-10
  alignas(64) float c[16 * 16];
  load_eight_full_tiles();
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

}  // namespace

ProbeLoops probe_loops() {
  ProbeLoops l{&read_stream, &write_stream, &copy_stream, false, &fma_chains, nullptr, nullptr};
#if defined(__SSE__)
  l.streaming_stores = true;
#endif
#if defined(__AVX512BF16__)
  l.bf16_dot = &bf16_dot;
#endif
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  l.amx_dot = &amx_dot;
#endif
  return l;
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
