// Ceilings measured in the running process: memory bandwidth (read, write, copy), peak f32 FMA throughput
// and thread-to-thread latency. The op-time record divides by these (DESIGN.md section 2.2); measuring them
// in the same run matters here because bandwidth moves with vCPU placement (MACHINE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fourfold {

// One probe: a few repeats, each its own figure. The median is the ceiling the record uses; min and max
// show how much the machine moved while it was measured.
struct ProbeFigure {
  std::vector<double> samples;
  double median = 0.0, min = 0.0, max = 0.0;
  double spread() const { return max - min; }
};

struct RooflineProbe {
  int threads = 1;                  // threads the bandwidth and FMA probes ran on (num_threads())
  std::string isa;                  // the ISA level whose loops ran (backends/cpu/kernels/probe_loops.cpp)
  size_t buffer_bytes = 0;          // read and write probes: this many bytes; copy: half of it to the other half
  bool nontemporal_stores = false;  // write and copy used streaming stores
  // The buffer was advised to use transparent huge pages (madvise), and how many of its bytes the kernel
  // backed with them (from /proc/self/smaps). 2 MiB pages matter here: a 1 GiB read on 4 KiB pages is held
  // well below what huge pages give by the TLB misses (docs/records.md, Probes).
  bool huge_pages_requested = false;
  size_t huge_page_bytes = 0;
  // GB/s = 1e9 bytes per second. Read: bytes loaded. Write: bytes stored. Copy: bytes loaded + bytes
  // stored (2 x the copied size), which is what an op that reads one buffer and writes another moves.
  ProbeFigure read_gbs, write_gbs, copy_gbs;
  ProbeFigure fma_gflops;           // f32, 2 flops per lane per FMA, all threads, independent chains in registers
  // vdpbf16ps, 4 flops per f32 lane (two multiply-adds), the same way; measured where the level has it
  // (avx512bf16 and amx). A bf16 prefill's peak: not always 2 x fma_gflops.
  std::optional<ProbeFigure> bf16_dot_gflops;
  // AMX TDPBF16PS on tiles held in the unit (16 x 16 x 32 multiply-adds per instruction), the same way; measured
  // at the amx level. A bf16 prefill's peak at that level.
  std::optional<ProbeFigure> amx_dot_gflops;
  // One-way thread-to-thread hop, ns: two threads on two CPUs pass a counter on one cache line back and
  // forth; a round trip is two hops. Unmeasured (empty) when the process may use fewer than two CPUs.
  ProbeFigure hop_ns;
  bool hop_measured = false;
  int hop_cpus[2] = {-1, -1};       // the CPUs the two threads were pinned to (-1: not pinned)
  double seconds = 0.0;             // wall time of all probes
};

struct ProbeBudget {
  // Much larger than the last-level cache, or the probes measure the cache (32 MB L3 here).
  size_t buffer_bytes = size_t{1} << 30;
  int repeats = 5;
  double fma_seconds = 0.05;        // per FMA repeat
  int64_t hop_round_trips = 200000; // per latency repeat
  std::optional<std::string> isa;   // a level of host_kernel_isas(); default: the level the kernels run
  bool measure_latency = true;
  // Ask for transparent huge pages on the buffer: the ceiling is what the memory system can give. Off, the
  // probes measure what 4 KiB pages give (what a kernel on un-advised memory can reach).
  bool huge_pages = true;

  static ProbeBudget quick();       // 256 MiB, 3 repeats: a few tenths of a second
  static ProbeBudget tiny();        // 16 MiB, 2 repeats: for tests (measures caches, not DRAM)
};

// Runs every probe once per repeat on num_threads() threads. Buffers come from the caching allocator
// (Tensor::empty) and are written once before any timing, so no probe pays first-touch page faults.
RooflineProbe measure_roofline(const ProbeBudget& budget = {});

// The single probes, for tests and for callers that need one figure, each with the loops of `isa` (a level of
// host_kernel_isas(); UnsupportedError otherwise). Each returns GB/s or GFLOP/s of one run.
double probe_read_gbs(const void* buffer, size_t bytes, const std::string& isa);
double probe_write_gbs(void* buffer, size_t bytes, const std::string& isa);
double probe_copy_gbs(void* dst, const void* src, size_t bytes, const std::string& isa);   // counts 2 * bytes
double probe_fma_gflops(double seconds, const std::string& isa);
// vdpbf16ps and AMX tiles: UnsupportedError naming the probe where the level lacks them.
double probe_bf16_dot_gflops(double seconds, const std::string& isa);
double probe_amx_dot_gflops(double seconds, const std::string& isa);
// ns per one-way hop over `round_trips` round trips; nullopt when two CPUs are not available.
std::optional<double> probe_hop_ns(int64_t round_trips, int* cpus_used = nullptr);

// The compute peak a prefill at `activation` is judged against (fourfold run's "prefill compute" line): the AMX
// probe where the kernels run the amx level, else the vdpbf16ps probe where they run vdpbf16ps, else 2 x the FMA
// probe for bf16 (two multiply-adds per f32 lane's worth of bf16, a peak a level that widens bf16 to f32 FMAs
// cannot reach: `widened` says so), else the FMA probe. The op-time record's roofline stays on the FMA probe
// for every dtype (docs/records.md), as the PyTorch driver's does.
struct ComputePeak {
  double gflops = 0.0;
  std::string source;      // "the AMX probe", "the vdpbf16ps probe", "2 x the FMA probe", "the FMA probe"
  bool widened = false;    // bf16 on a level without a bf16 dot product
};
ComputePeak prefill_compute_peak(const RooflineProbe& probe, bool bf16_activations);

std::string describe_probe(const RooflineProbe& probe);   // multi-line, human-readable

}  // namespace fourfold
