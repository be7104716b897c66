#include "check/roofline_probes.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "check/statistics.h"
#include "fourfold/errors.h"
#include "fourfold/parallel.h"
#include "fourfold/tensor.h"
#include "ops/kernel_isa.h"

namespace fourfold {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Results land here so that the compiler cannot drop a probe whose value nobody reads.
std::atomic<double> g_sink{0.0};
void consume(double v) { g_sink.store(g_sink.load(std::memory_order_relaxed) + v, std::memory_order_relaxed); }

// Software prefetch distance of the read and copy probes, one line prefetched per line loaded. On a pure
// stream the hardware prefetchers already do well, and no distance from 0 (none) to 4 KiB stands out of the
// run-to-run spread (docs/records.md, Probes). It stays so that the ceiling is what a
// kernel using software prefetch (MACHINE.md: the GEMVs need it) can reach, never less.
constexpr int kPrefetchBytes = 1024;
constexpr int64_t kLine = 64;

// ---------------------------------------------------------------- read
float read_scalar(const float* p, int64_t n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += p[i];
    s1 += p[i + 1];
    s2 += p[i + 2];
    s3 += p[i + 3];
  }
  for (; i < n; ++i) s0 += p[i];
  return (s0 + s1) + (s2 + s3);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) float read_avx2(const float* p, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {   // 128 bytes = two lines per iteration
    const char* c = reinterpret_cast<const char*>(p + i);
    _mm_prefetch(c + kPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(c + kPrefetchBytes + kLine, _MM_HINT_T0);
    s0 = _mm256_add_ps(s0, _mm256_loadu_ps(p + i));
    s1 = _mm256_add_ps(s1, _mm256_loadu_ps(p + i + 8));
    s2 = _mm256_add_ps(s2, _mm256_loadu_ps(p + i + 16));
    s3 = _mm256_add_ps(s3, _mm256_loadu_ps(p + i + 24));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  float s = 0;
  for (float v : lanes) s += v;
  return s + read_scalar(p + i, n - i);
}

// _mm512_reduce_add_ps trips a false -Wuninitialized in GCC 12's header; a store and a loop do not.
__attribute__((target("avx512f"))) float sum_lanes(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float s = 0;
  for (float x : lanes) s += x;
  return s;
}

__attribute__((target("avx512f"))) float read_avx512(const float* p, int64_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {   // 256 bytes = four lines per iteration
    const char* c = reinterpret_cast<const char*>(p + i);
    _mm_prefetch(c + kPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(c + kPrefetchBytes + kLine, _MM_HINT_T0);
    _mm_prefetch(c + kPrefetchBytes + 2 * kLine, _MM_HINT_T0);
    _mm_prefetch(c + kPrefetchBytes + 3 * kLine, _MM_HINT_T0);
    s0 = _mm512_add_ps(s0, _mm512_loadu_ps(p + i));
    s1 = _mm512_add_ps(s1, _mm512_loadu_ps(p + i + 16));
    s2 = _mm512_add_ps(s2, _mm512_loadu_ps(p + i + 32));
    s3 = _mm512_add_ps(s3, _mm512_loadu_ps(p + i + 48));
  }
  const float s = sum_lanes(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  return s + read_scalar(p + i, n - i);
}
#endif

float read_chunk(const float* p, int64_t n, ProbeIsa isa) {
#if defined(__x86_64__)
  if (isa == ProbeIsa::avx512) return read_avx512(p, n);
  if (isa == ProbeIsa::avx2) return read_avx2(p, n);
#endif
  return read_scalar(p, n);
}

// ---------------------------------------------------------------- write
void write_scalar(float* p, int64_t n, float v) {
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}

#if defined(__x86_64__)
// Streaming stores need 32/64-byte alignment: plain stores up to the first aligned address and after the
// last full block.
__attribute__((target("avx2"))) void write_avx2(float* p, int64_t n, float v) {
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(p + i) & 31) != 0; ++i) p[i] = v;
  const __m256 x = _mm256_set1_ps(v);
  for (; i + 32 <= n; i += 32) {
    _mm256_stream_ps(p + i, x);
    _mm256_stream_ps(p + i + 8, x);
    _mm256_stream_ps(p + i + 16, x);
    _mm256_stream_ps(p + i + 24, x);
  }
  for (; i < n; ++i) p[i] = v;
  _mm_sfence();
}

__attribute__((target("avx512f"))) void write_avx512(float* p, int64_t n, float v) {
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(p + i) & 63) != 0; ++i) p[i] = v;
  const __m512 x = _mm512_set1_ps(v);
  for (; i + 64 <= n; i += 64) {
    _mm512_stream_ps(p + i, x);
    _mm512_stream_ps(p + i + 16, x);
    _mm512_stream_ps(p + i + 32, x);
    _mm512_stream_ps(p + i + 48, x);
  }
  for (; i < n; ++i) p[i] = v;
  _mm_sfence();
}
#endif

void write_chunk(float* p, int64_t n, float v, ProbeIsa isa) {
#if defined(__x86_64__)
  if (isa == ProbeIsa::avx512) return write_avx512(p, n, v);
  if (isa == ProbeIsa::avx2) return write_avx2(p, n, v);
#endif
  write_scalar(p, n, v);
}

// ---------------------------------------------------------------- copy
void copy_scalar(float* d, const float* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = s[i];
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void copy_avx2(float* d, const float* s, int64_t n) {
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(d + i) & 31) != 0; ++i) d[i] = s[i];
  for (; i + 32 <= n; i += 32) {
    const char* c = reinterpret_cast<const char*>(s + i);
    _mm_prefetch(c + kPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(c + kPrefetchBytes + kLine, _MM_HINT_T0);
    _mm256_stream_ps(d + i, _mm256_loadu_ps(s + i));
    _mm256_stream_ps(d + i + 8, _mm256_loadu_ps(s + i + 8));
    _mm256_stream_ps(d + i + 16, _mm256_loadu_ps(s + i + 16));
    _mm256_stream_ps(d + i + 24, _mm256_loadu_ps(s + i + 24));
  }
  for (; i < n; ++i) d[i] = s[i];
  _mm_sfence();
}

__attribute__((target("avx512f"))) void copy_avx512(float* d, const float* s, int64_t n) {
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(d + i) & 63) != 0; ++i) d[i] = s[i];
  for (; i + 64 <= n; i += 64) {
    const char* c = reinterpret_cast<const char*>(s + i);
    _mm_prefetch(c + kPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(c + kPrefetchBytes + kLine, _MM_HINT_T0);
    _mm_prefetch(c + kPrefetchBytes + 2 * kLine, _MM_HINT_T0);
    _mm_prefetch(c + kPrefetchBytes + 3 * kLine, _MM_HINT_T0);
    _mm512_stream_ps(d + i, _mm512_loadu_ps(s + i));
    _mm512_stream_ps(d + i + 16, _mm512_loadu_ps(s + i + 16));
    _mm512_stream_ps(d + i + 32, _mm512_loadu_ps(s + i + 32));
    _mm512_stream_ps(d + i + 48, _mm512_loadu_ps(s + i + 48));
  }
  for (; i < n; ++i) d[i] = s[i];
  _mm_sfence();
}
#endif

void copy_chunk(float* d, const float* s, int64_t n, ProbeIsa isa) {
#if defined(__x86_64__)
  if (isa == ProbeIsa::avx512) return copy_avx512(d, s, n);
  if (isa == ProbeIsa::avx2) return copy_avx2(d, s, n);
#endif
  copy_scalar(d, s, n);
}

// ---------------------------------------------------------------- FMA
// acc = acc * a + b converges to b / (1 - a) and stays a normal number: no denormal or overflow slows it.
// Enough independent chains to cover FMA latency x throughput (4 cycles x 2 per cycle on Zen 4 and most
// x86 cores), and few enough that the accumulators and the two constants stay in registers.
constexpr float kFmaA = 0.5f, kFmaB = 0.25f;

float fma_scalar(int64_t iters, int64_t* flops_per_iter) {
  constexpr int kChains = 8;
  *flops_per_iter = 2 * kChains;
  float acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = static_cast<float>(j);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 8
    for (int j = 0; j < kChains; ++j) acc[j] = acc[j] * kFmaA + kFmaB;
  }
  float s = 0;
  for (float v : acc) s += v;
  return s;
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) float fma_avx2(int64_t iters, int64_t* flops_per_iter) {
  constexpr int kChains = 12;   // 12 + 2 constants of the 16 ymm registers
  *flops_per_iter = 2 * 8 * kChains;
  const __m256 a = _mm256_set1_ps(kFmaA), b = _mm256_set1_ps(kFmaB);
  __m256 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j));
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], a, b);
  }
  __m256 s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm256_add_ps(s, acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  float r = 0;
  for (float v : lanes) r += v;
  return r;
}

__attribute__((target("avx512f"))) float fma_avx512(int64_t iters, int64_t* flops_per_iter) {
  constexpr int kChains = 16;   // of 32 zmm registers
  *flops_per_iter = 2 * 16 * kChains;
  const __m512 a = _mm512_set1_ps(kFmaA), b = _mm512_set1_ps(kFmaB);
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  }
  __m512 s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm512_add_ps(s, acc[j]);
  return sum_lanes(s);
}

// vdpbf16ps: two multiply-adds per f32 lane, but not always at the FMA's rate: on an Intel Xeon (family 6
// model 207, 2 vCPUs) one zmm vdpbf16ps took ~0.8 ns against ~0.17 ns per zmm FMA, so its peak was about half
// the FMA's in flops, not twice. Prefill is judged against this probe, not against 2 x the FMA. acc grows by
// 2 * 2^-20 per step: normal, far from overflow for any run length.
__attribute__((target("avx512f,avx512bf16"))) float bf16_dot_avx512(int64_t iters, int64_t* flops_per_iter) {
  constexpr int kChains = 16;
  *flops_per_iter = 4 * 16 * kChains;
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3a80);   // bf16 2^-10
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], a, a);
  }
  __m512 s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm512_add_ps(s, acc[j]);
  return sum_lanes(s);
}
#endif

float fma_run(int64_t iters, ProbeIsa isa, int64_t* flops_per_iter) {
#if defined(__x86_64__)
  if (isa == ProbeIsa::avx512) return fma_avx512(iters, flops_per_iter);
  if (isa == ProbeIsa::avx2) return fma_avx2(iters, flops_per_iter);
#endif
  return fma_scalar(iters, flops_per_iter);
}

// ---------------------------------------------------------------- helpers
// Splits n floats into one 256-byte-aligned chunk per thread and runs fn(chunk, begin, count) on each.
template <class Fn>
void for_each_chunk(int64_t n, const Fn& fn) {
  const int64_t threads = num_threads();
  constexpr int64_t kAlign = 64;   // floats: 256 bytes, a whole unrolled iteration of every kernel
  parallel_for(0, threads, 1, [&](int64_t tb, int64_t te) {
    for (int64_t t = tb; t < te; ++t) {
      const int64_t begin = (n * t / threads) / kAlign * kAlign;
      const int64_t end = t + 1 == threads ? n : (n * (t + 1) / threads) / kAlign * kAlign;
      if (end > begin) fn(t, begin, end - begin);
    }
  });
}

ProbeFigure make_figure(std::vector<double> samples) {
  ProbeFigure f;
  const Summary s = summarize(samples);
  f.samples = std::move(samples);
  f.median = s.median;
  f.min = s.min;
  f.max = s.max;
  return f;
}

void check_isa(ProbeIsa isa, const char* where) {
  if (!probe_isa_supported(isa))
    fail<UnsupportedError>(where, "isa", "an instruction set this CPU supports",
                           std::string(probe_isa_name(isa)));
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// AnonHugePages of the mapping that holds `address`, from /proc/self/smaps (0 when not found).
size_t huge_page_bytes_at(const void* address) {
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return 0;
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  char line[512];
  bool inside = false;
  size_t bytes = 0;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long start = 0, end = 0;
    if (std::sscanf(line, "%lx-%lx ", &start, &end) == 2 && std::strchr(line, ':') != nullptr &&
        std::strchr(line, '-') < std::strchr(line, ' ')) {
      inside = a >= start && a < end;
      continue;
    }
    unsigned long kb = 0;
    if (inside && std::sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) {
      bytes = static_cast<size_t>(kb) << 10;
      break;
    }
  }
  std::fclose(f);
  return bytes;
}

bool pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace

std::string_view probe_isa_name(ProbeIsa isa) {
  switch (isa) {
    case ProbeIsa::avx512: return "avx512";
    case ProbeIsa::avx2: return "avx2";
    case ProbeIsa::scalar: return "scalar";
  }
  return "?";
}

bool probe_isa_supported(ProbeIsa isa) {
#if defined(__x86_64__)
  switch (isa) {
    case ProbeIsa::avx512: return __builtin_cpu_supports("avx512f");
    case ProbeIsa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case ProbeIsa::scalar: return true;
  }
  return false;
#else
  return isa == ProbeIsa::scalar;
#endif
}

ProbeIsa best_probe_isa() {
  if (probe_isa_supported(ProbeIsa::avx512)) return ProbeIsa::avx512;
  if (probe_isa_supported(ProbeIsa::avx2)) return ProbeIsa::avx2;
  return ProbeIsa::scalar;
}

ProbeBudget ProbeBudget::quick() {
  ProbeBudget b;
  b.buffer_bytes = size_t{256} << 20;
  b.repeats = 3;
  b.fma_seconds = 0.02;
  b.hop_round_trips = 50000;
  return b;
}

ProbeBudget ProbeBudget::tiny() {
  ProbeBudget b;
  b.buffer_bytes = size_t{16} << 20;
  b.repeats = 2;
  b.fma_seconds = 0.005;
  b.hop_round_trips = 5000;
  return b;
}

double probe_read_gbs(const void* buffer, size_t bytes, ProbeIsa isa) {
  check_isa(isa, "probe_read_gbs");
  const float* p = static_cast<const float*>(buffer);
  const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
  std::vector<double> partial(static_cast<size_t>(num_threads()), 0.0);
  const auto start = Clock::now();
  for_each_chunk(n, [&](int64_t chunk, int64_t begin, int64_t count) {
    partial[static_cast<size_t>(chunk)] = read_chunk(p + begin, count, isa);
  });
  const double seconds = seconds_since(start);
  double total = 0;
  for (double v : partial) total += v;
  consume(total);
  return static_cast<double>(n) * sizeof(float) / seconds / 1e9;
}

double probe_write_gbs(void* buffer, size_t bytes, ProbeIsa isa) {
  check_isa(isa, "probe_write_gbs");
  float* p = static_cast<float*>(buffer);
  const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
  const auto start = Clock::now();
  for_each_chunk(n, [&](int64_t, int64_t begin, int64_t count) { write_chunk(p + begin, count, 1.0f, isa); });
  const double seconds = seconds_since(start);
  return static_cast<double>(n) * sizeof(float) / seconds / 1e9;
}

double probe_copy_gbs(void* dst, const void* src, size_t bytes, ProbeIsa isa) {
  check_isa(isa, "probe_copy_gbs");
  float* d = static_cast<float*>(dst);
  const float* s = static_cast<const float*>(src);
  const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
  const auto start = Clock::now();
  for_each_chunk(n, [&](int64_t, int64_t begin, int64_t count) { copy_chunk(d + begin, s + begin, count, isa); });
  const double seconds = seconds_since(start);
  return 2.0 * static_cast<double>(n) * sizeof(float) / seconds / 1e9;
}

namespace {

// GFLOP/s of `run` (iterations, flops per iteration) on every thread, its length calibrated on one thread.
template <class Run>
double probe_compute(double seconds, Run run) {
  const int threads = num_threads();
  int64_t flops_per_iter = 0;
  // Calibrate on one thread: iterations per second of this kernel.
  int64_t iters = 1 << 14;
  double elapsed = 0;
  for (;;) {
    const auto start = Clock::now();
    consume(run(iters, &flops_per_iter));
    elapsed = seconds_since(start);
    if (elapsed > 2e-3 || iters > (int64_t{1} << 40)) break;
    iters *= 4;
  }
  iters = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(iters) * seconds / elapsed));
  std::vector<float> partial(static_cast<size_t>(threads), 0.0f);
  const auto start = Clock::now();
  parallel_for(0, threads, 1, [&](int64_t tb, int64_t te) {
    for (int64_t t = tb; t < te; ++t) {
      int64_t per = 0;
      partial[static_cast<size_t>(t)] = run(iters, &per);
    }
  });
  const double wall = seconds_since(start);
  double total = 0;
  for (float v : partial) total += v;
  consume(total);
  return static_cast<double>(flops_per_iter) * static_cast<double>(iters) * threads / wall / 1e9;
}

}  // namespace

double probe_fma_gflops(double seconds, ProbeIsa isa) {
  check_isa(isa, "probe_fma_gflops");
  return probe_compute(seconds, [isa](int64_t iters, int64_t* per) { return fma_run(iters, isa, per); });
}

bool bf16_dot_available() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

double probe_bf16_dot_gflops(double seconds) {
  if (!bf16_dot_available())
    fail<ValueError>("probe_bf16_dot_gflops", "host", "a CPU with AVX512_BF16 (vdpbf16ps)", "one without it");
#if defined(__x86_64__)
  return probe_compute(seconds, [](int64_t iters, int64_t* per) { return bf16_dot_avx512(iters, per); });
#else
  return 0.0;
#endif
}

bool amx_dot_available() { return host_runs_amx(); }

double probe_amx_dot_gflops(double seconds) {
  if (!amx_dot_available())
    fail<ValueError>("probe_amx_dot_gflops", "host", "a CPU with AMX-TILE and AMX-BF16, granted by the OS",
                     "one without them");
#if defined(__x86_64__)
  return probe_compute(seconds, [](int64_t iters, int64_t* per) { return amx_dot_loop(iters, per); });
#else
  return 0.0;
#endif
}

std::optional<double> probe_hop_ns(int64_t round_trips, int* cpus_used) {
  if (round_trips < 1) fail<ValueError>("probe_hop_ns", "round_trips", "at least 1", std::to_string(round_trips));
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) return std::nullopt;
  // One counter alone on its cache line; the two threads own the odd and the even values.
  struct alignas(64) Line {
    std::atomic<int64_t> value{0};
    char pad[64 - sizeof(std::atomic<int64_t>)];
  };
  Line line;
  std::atomic<int> ready{0};
  constexpr int64_t kStop = -1;
  // A hop that waits for a descheduled thread costs a scheduler slice; the deadline keeps a crowded
  // machine from stalling the probe, and the figure is then the time per hop over the trips done.
  constexpr double kDeadlineSeconds = 2.0;
  double elapsed = 0;
  int64_t done = 0;
  bool pinned[2] = {false, false};
  std::thread responder([&] {
    pinned[1] = pin_current_thread(cpus[1]);
    ready.fetch_add(1);
    while (ready.load() < 2) {}
    for (int64_t i = 0; i < round_trips; ++i) {
      int64_t v;
      while ((v = line.value.load(std::memory_order_acquire)) != 2 * i + 1)
        if (v == kStop) return;
      line.value.store(2 * i + 2, std::memory_order_release);
    }
  });
  std::thread initiator([&] {
    pinned[0] = pin_current_thread(cpus[0]);
    ready.fetch_add(1);
    while (ready.load() < 2) {}
    const auto start = Clock::now();
    int64_t i = 0;
    for (; i < round_trips; ++i) {
      line.value.store(2 * i + 1, std::memory_order_release);
      while (line.value.load(std::memory_order_acquire) != 2 * i + 2) {}
      if ((i & 1023) == 1023 && seconds_since(start) > kDeadlineSeconds) {
        ++i;
        break;
      }
    }
    elapsed = seconds_since(start);
    done = i;
    if (done < round_trips) line.value.store(kStop, std::memory_order_release);
  });
  initiator.join();
  responder.join();
  if (cpus_used != nullptr) {
    cpus_used[0] = pinned[0] ? cpus[0] : -1;
    cpus_used[1] = pinned[1] ? cpus[1] : -1;
  }
  return elapsed / (2.0 * static_cast<double>(done)) * 1e9;
}

RooflineProbe measure_roofline(const ProbeBudget& budget) {
  const auto start = Clock::now();
  if (budget.repeats < 1)
    fail<ValueError>("measure_roofline", "repeats", "at least 1", std::to_string(budget.repeats));
  if (budget.buffer_bytes < (size_t{1} << 20))
    fail<ValueError>("measure_roofline", "buffer_bytes", "at least 1 MiB", std::to_string(budget.buffer_bytes));
  if (!(budget.fma_seconds > 0))
    fail<ValueError>("measure_roofline", "fma_seconds", "a positive duration", fmt::format("{}", budget.fma_seconds));
  RooflineProbe r;
  r.isa = budget.isa.value_or(best_probe_isa());
  check_isa(r.isa, "measure_roofline");
  r.threads = num_threads();
  r.nontemporal_stores = r.isa != ProbeIsa::scalar;
  // Whole 256-byte blocks, so that the two copy halves start on the same alignment; 2 MiB of slack to start
  // the probed range on a huge-page boundary.
  r.buffer_bytes = budget.buffer_bytes / 512 * 512;
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  Tensor buffer = Tensor::empty({static_cast<int64_t>((r.buffer_bytes + kHuge) / sizeof(float))}, DType::f32);
  void* data = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(buffer.data()) + kHuge - 1) & ~(kHuge - 1));
  if (budget.huge_pages) r.huge_pages_requested = madvise(data, r.buffer_bytes, MADV_HUGEPAGE) == 0;
  // First touch, spread over the threads like the probes themselves; also the write probe's warm-up.
  probe_write_gbs(data, r.buffer_bytes, r.isa);
  r.huge_page_bytes = std::min(huge_page_bytes_at(data), r.buffer_bytes);

  std::vector<double> read, write, copy, fma, hop;
  probe_read_gbs(data, r.buffer_bytes, r.isa);   // warm-up: TLB and prefetcher state
  for (int i = 0; i < budget.repeats; ++i) read.push_back(probe_read_gbs(data, r.buffer_bytes, r.isa));
  for (int i = 0; i < budget.repeats; ++i) write.push_back(probe_write_gbs(data, r.buffer_bytes, r.isa));
  const size_t half = r.buffer_bytes / 2;
  char* bytes = static_cast<char*>(data);
  probe_copy_gbs(bytes + half, bytes, half, r.isa);
  for (int i = 0; i < budget.repeats; ++i) copy.push_back(probe_copy_gbs(bytes + half, bytes, half, r.isa));
  for (int i = 0; i < budget.repeats; ++i) fma.push_back(probe_fma_gflops(budget.fma_seconds, r.isa));
  if (r.isa == ProbeIsa::avx512 && bf16_dot_available()) {
    std::vector<double> dot;
    for (int i = 0; i < budget.repeats; ++i) dot.push_back(probe_bf16_dot_gflops(budget.fma_seconds));
    r.bf16_dot_gflops = make_figure(dot);
  }
  if (r.isa == ProbeIsa::avx512 && amx_dot_available()) {
    std::vector<double> dot;
    for (int i = 0; i < budget.repeats; ++i) dot.push_back(probe_amx_dot_gflops(budget.fma_seconds));
    r.amx_dot_gflops = make_figure(dot);
  }
  r.read_gbs = make_figure(read);
  r.write_gbs = make_figure(write);
  r.copy_gbs = make_figure(copy);
  r.fma_gflops = make_figure(fma);
  if (budget.measure_latency) {
    for (int i = 0; i < budget.repeats; ++i) {
      const std::optional<double> ns = probe_hop_ns(budget.hop_round_trips, r.hop_cpus);
      if (!ns) break;
      hop.push_back(*ns);
    }
    if (!hop.empty()) {
      r.hop_ns = make_figure(hop);
      r.hop_measured = true;
    }
  }
  r.seconds = seconds_since(start);
  return r;
}

std::string describe_probe(const RooflineProbe& p) {
  auto line = [](const char* name, const ProbeFigure& f, const char* unit) {
    return fmt::format("  {:<18} {:>9.1f} {}  (min {:.1f}, max {:.1f}, {} repeats)\n", name, f.median, unit, f.min,
                       f.max, f.samples.size());
  };
  std::string s = fmt::format("roofline probes: {} threads, {} kernels, {} MiB buffer ({} MiB on huge pages{}){}, {:.2f} s\n",
                              p.threads, probe_isa_name(p.isa), p.buffer_bytes >> 20, p.huge_page_bytes >> 20,
                              p.huge_pages_requested ? "" : ", not requested",
                              p.nontemporal_stores ? ", streaming stores" : "", p.seconds);
  s += line("read", p.read_gbs, "GB/s");
  s += line("write", p.write_gbs, "GB/s");
  s += line("copy (rd+wr)", p.copy_gbs, "GB/s");
  s += line("f32 FMA peak", p.fma_gflops, "GFLOP/s");
  if (p.bf16_dot_gflops) s += line("bf16 dot peak", *p.bf16_dot_gflops, "GFLOP/s");
  if (p.amx_dot_gflops) s += line("amx bf16 peak", *p.amx_dot_gflops, "GFLOP/s");
  if (p.hop_measured)
    s += fmt::format("  {:<18} {:>9.1f} ns    (min {:.1f}, max {:.1f}; CPUs {} and {})\n", "thread hop (1-way)",
                     p.hop_ns.median, p.hop_ns.min, p.hop_ns.max, p.hop_cpus[0], p.hop_cpus[1]);
  else
    s += fmt::format("  {:<18} not measured (fewer than two CPUs available)\n", "thread hop (1-way)");
  return s;
}

}  // namespace fourfold
