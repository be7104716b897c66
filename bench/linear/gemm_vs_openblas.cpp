// Prefill linear (y[M, N] = x[M, K] W[N, K]^T) on fourfold's dedicated tier against Debian's OpenBLAS, over the
// decode-linear suite's weight shapes of Qwen3-30B-A3B and Llama-3.1-8B at M = 128, 512, 2048 tokens.
//   f32:  fourfold linear (f32)                       vs cblas_sgemm (NoTrans, Trans)
//   bf16: fourfold linear (bf16 x, bf16 W, bf16 out)  vs cblas_sgemm on f32 copies of the same bf16 values,
//         converted before timing (favours OpenBLAS: it reads twice the bytes but pays no conversion). Debian 12's
//         OpenBLAS 0.3.21 is built without BUILD_BFLOAT16, so it has no cblas_sbgemm to compare with.
// Both run on the same thread count (default: fourfold's num_threads()). Calls alternate (fourfold, OpenBLAS,
// fourfold, ...) so that both see the same machine state; each figure is the median of `reps` calls with its
// min..max. The ceiling is the f32 FMA probe of src/check/roofline_probes.h, taken in the same run. On a shared
// machine wall time mostly measures the neighbours, so each call is also timed in process CPU seconds (all
// threads; exact with one thread, and the "cpu ratio" column compares the two libraries by it).
// Usage: gemm_vs_openblas [reps=5] [max_gflop_per_call=40] [threads]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include <cblas.h>

#include "check/roofline_probes.h"
#include "fourfold/ops.h"
#include "ops/kernel_isa.h"
#include "fourfold/parallel.h"
#include "fourfold/policy.h"

namespace {

using Clock = std::chrono::steady_clock;
using fourfold::DType;
using fourfold::Tensor;

struct Shape {
  const char* name;
  int64_t n, k;
};

// Distinct weight shapes from data/suites/decode-linear.json (lm_head left out: 128256 / 151936 rows make a
// single prefill call tens of seconds on two cores).
constexpr Shape kShapes[] = {
    {"qwen3-30b-a3b q_proj", 4096, 2048},          {"qwen3-30b-a3b k_proj", 512, 2048},
    {"qwen3-30b-a3b o_proj", 2048, 4096},          {"qwen3-30b-a3b router", 128, 2048},
    {"qwen3-30b-a3b expert gate_proj", 768, 2048}, {"qwen3-30b-a3b expert down_proj", 2048, 768},
    {"llama-3.1-8b q_proj", 4096, 4096},           {"llama-3.1-8b k_proj", 1024, 4096},
    {"llama-3.1-8b gate_proj", 14336, 4096},       {"llama-3.1-8b down_proj", 4096, 14336},
};

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timing {
  double wall, cpu;
};
Timing seconds_of(auto&& fn) {
  const double c0 = cpu_seconds();
  const auto t0 = Clock::now();
  fn();
  return {std::chrono::duration<double>(Clock::now() - t0).count(), cpu_seconds() - c0};
}

struct Stat {
  double median, min, max;
};
Stat stat(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  const double max_gflop = argc > 2 ? std::atof(argv[2]) : 40.0;
  if (argc > 3) fourfold::set_num_threads(std::atoi(argv[3]));
  const int threads = fourfold::num_threads();
  openblas_set_num_threads(threads);
  fourfold::ScopedPolicy dedicated(fourfold::Policy::parse("dedicated"));

  // The FMA probe in wall time (all threads) and per CPU-second (one core's rate, whatever the neighbours do).
  std::vector<double> peaks, core_peaks;
  for (int i = 0; i < 3; ++i) {
    double gflops = 0;
    const Timing t = seconds_of([&] { gflops = fourfold::probe_fma_gflops(0.25, fourfold::active_kernel_isa().name); });
    peaks.push_back(gflops);
    core_peaks.push_back(gflops * t.wall / t.cpu);
  }
  const Stat peak = stat(peaks), core_peak = stat(core_peaks);
  std::printf("threads %d, OpenBLAS core %s, FMA peak probe %.1f GFLOP/s (%.1f..%.1f), per CPU-second %.1f (%.1f..%.1f); "
              "%d reps, calls <= %.0f GFLOP\n",
              threads, openblas_get_corename(), peak.median, peak.min, peak.max, core_peak.median, core_peak.min,
              core_peak.max, reps, max_gflop);
  std::printf("%-30s %4s %5s %5s %4s | %21s %5s | %21s %5s | %5s | %13s %13s %5s\n", "shape", "M", "N", "K", "type",
              "fourfold GFLOP/s", "%peak", "OpenBLAS GFLOP/s", "%peak", "ratio", "ff /cpu-s %pk", "OB /cpu-s %pk",
              "ratio");

  for (int64_t m : {128, 512, 2048})
    for (const Shape& s : kShapes) {
      const double gflop = 2.0 * m * s.n * s.k * 1e-9;
      if (gflop > max_gflop) {
        std::printf("%-30s %4lld %5lld %5lld  skipped (%.0f GFLOP per call)\n", s.name, (long long)m, (long long)s.n,
                    (long long)s.k, gflop);
        continue;
      }
      for (DType t : {DType::f32, DType::bf16}) {
        Tensor x = Tensor::empty({m, s.k}, t), w = Tensor::empty({s.n, s.k}, t);
        x.fill_normal(1);
        w.fill_normal(2);
        Tensor c = Tensor::empty({m, s.n}, DType::f32);
        const Tensor xf = x.to(DType::f32), wf = w.to(DType::f32);
        const auto ours = [&] { fourfold::linear(x, w); };
        const auto theirs = [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, s.n, s.k, 1.0f, xf.data_as<float>(), s.k,
                      wf.data_as<float>(), s.k, 0.0f, c.data_as<float>(), s.n);
        };
        ours();   // warm-up: page faults, the pool, OpenBLAS's buffers
        theirs();
        std::vector<double> a, b, ca, cb;
        for (int r = 0; r < reps; ++r) {
          const Timing ta = seconds_of(ours), tb = seconds_of(theirs);
          a.push_back(gflop / ta.wall);
          b.push_back(gflop / tb.wall);
          ca.push_back(gflop / ta.cpu);
          cb.push_back(gflop / tb.cpu);
        }
        const Stat sa = stat(a), sb = stat(b), sca = stat(ca), scb = stat(cb);
        std::printf("%-30s %4lld %5lld %5lld %4s | %5.1f (%5.1f..%5.1f) %4.0f%% | %5.1f (%5.1f..%5.1f) %4.0f%% | %5.2f | "
                    "%6.1f %4.0f%%  %6.1f %4.0f%%  %5.2f\n",
                    s.name, (long long)m, (long long)s.n, (long long)s.k, t == DType::f32 ? "f32" : "bf16", sa.median,
                    sa.min, sa.max, 100 * sa.median / peak.median, sb.median, sb.min, sb.max,
                    100 * sb.median / peak.median, sa.median / sb.median, sca.median, 100 * sca.median / core_peak.median,
                    scb.median, 100 * scb.median / core_peak.median, sca.median / scb.median);
        std::fflush(stdout);
      }
    }
  return 0;
}
