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

double probe_read_gbs(const void* buffer, size_t bytes, const std::string& isa) {
  const auto read = isa_probe_loops(isa, "probe_read_gbs").read;
  const float* p = static_cast<const float*>(buffer);
  const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
  std::vector<double> partial(static_cast<size_t>(num_threads()), 0.0);
  const auto start = Clock::now();
  for_each_chunk(n, [&](int64_t chunk, int64_t begin, int64_t count) {
    partial[static_cast<size_t>(chunk)] = read(p + begin, count);
  });
  const double seconds = seconds_since(start);
  double total = 0;
  for (double v : partial) total += v;
  consume(total);
  return static_cast<double>(n) * sizeof(float) / seconds / 1e9;
}

double probe_write_gbs(void* buffer, size_t bytes, const std::string& isa) {
  const auto write = isa_probe_loops(isa, "probe_write_gbs").write;
  float* p = static_cast<float*>(buffer);
  const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
  const auto start = Clock::now();
  for_each_chunk(n, [&](int64_t, int64_t begin, int64_t count) { write(p + begin, count, 1.0f); });
  const double seconds = seconds_since(start);
  return static_cast<double>(n) * sizeof(float) / seconds / 1e9;
}

double probe_copy_gbs(void* dst, const void* src, size_t bytes, const std::string& isa) {
  const auto copy = isa_probe_loops(isa, "probe_copy_gbs").copy;
  float* d = static_cast<float*>(dst);
  const float* s = static_cast<const float*>(src);
  const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
  const auto start = Clock::now();
  for_each_chunk(n, [&](int64_t, int64_t begin, int64_t count) { copy(d + begin, s + begin, count); });
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

double probe_fma_gflops(double seconds, const std::string& isa) {
  return probe_compute(seconds, isa_probe_loops(isa, "probe_fma_gflops").fma);
}

double probe_bf16_dot_gflops(double seconds, const std::string& isa) {
  const auto dot = isa_probe_loops(isa, "probe_bf16_dot_gflops").bf16_dot;
  if (dot == nullptr)
    fail<UnsupportedError>("probe_bf16_dot_gflops", "isa", "a level with vdpbf16ps (avx512bf16, amx)", "'" + isa + "'");
  return probe_compute(seconds, dot);
}

double probe_amx_dot_gflops(double seconds, const std::string& isa) {
  const auto dot = isa_probe_loops(isa, "probe_amx_dot_gflops").amx_dot;
  if (dot == nullptr)
    fail<UnsupportedError>("probe_amx_dot_gflops", "isa", "the amx level (AMX-TILE and AMX-BF16 tiles)", "'" + isa + "'");
  return probe_compute(seconds, dot);
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
  r.isa = budget.isa.value_or(active_kernel_isa().name);
  const IsaProbeLoops loops = isa_probe_loops(r.isa, "measure_roofline");
  r.threads = num_threads();
  r.nontemporal_stores = loops.streaming_stores;
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
  if (loops.bf16_dot != nullptr) {
    std::vector<double> dot;
    for (int i = 0; i < budget.repeats; ++i) dot.push_back(probe_bf16_dot_gflops(budget.fma_seconds, r.isa));
    r.bf16_dot_gflops = make_figure(dot);
  }
  if (loops.amx_dot != nullptr) {
    std::vector<double> dot;
    for (int i = 0; i < budget.repeats; ++i) dot.push_back(probe_amx_dot_gflops(budget.fma_seconds, r.isa));
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

ComputePeak prefill_compute_peak(const RooflineProbe& probe, bool bf16_activations) {
  const KernelIsa level = active_kernel_isa();
  if (bf16_activations && probe.amx_dot_gflops && level.amx_tiles) return {probe.amx_dot_gflops->median, "the AMX probe", false};
  if (bf16_activations && probe.bf16_dot_gflops && level.bf16_dot_product)
    return {probe.bf16_dot_gflops->median, "the vdpbf16ps probe", false};
  if (bf16_activations) return {2.0 * probe.fma_gflops.median, "2 x the FMA probe", true};
  return {probe.fma_gflops.median, "the FMA probe", false};
}

std::string describe_probe(const RooflineProbe& p) {
  auto line = [](const char* name, const ProbeFigure& f, const char* unit) {
    return fmt::format("  {:<18} {:>9.1f} {}  (min {:.1f}, max {:.1f}, {} repeats)\n", name, f.median, unit, f.min,
                       f.max, f.samples.size());
  };
  std::string s = fmt::format("roofline probes: {} threads, {} kernels, {} MiB buffer ({} MiB on huge pages{}){}, {:.2f} s\n",
                              p.threads, p.isa, p.buffer_bytes >> 20, p.huge_page_bytes >> 20,
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
