// Fork/join cost of fourfold's pool against OpenMP on this machine: an empty region, timed many times.
// Usage: parallel_for_bench [threads] [iterations]. Prints median and p10/p90 ns per region, interleaved runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fourfold/parallel.h"
#ifdef FOURFOLD_HAVE_OPENMP
#include <omp.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

double per_region_ns(int iterations, auto&& region) {
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) region();
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iterations;
}

void report(const char* name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto q = [&](double f) { return v[static_cast<size_t>(f * (v.size() - 1))]; };
  std::printf("%-22s median %8.0f ns   p10 %8.0f   p90 %8.0f\n", name, q(0.5), q(0.1), q(0.9));
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20000;
  fourfold::set_num_threads(threads);
  volatile long sink = 0;
  std::vector<double> pool_ns, omp_ns;
  for (int rep = 0; rep < 15; ++rep) {   // interleaved, so a change of the host's state hits both
    pool_ns.push_back(per_region_ns(iterations, [&] {
      fourfold::parallel_for(0, threads, 1, [&](int64_t b, int64_t e) { sink = sink + (e - b); });
    }));
#ifdef FOURFOLD_HAVE_OPENMP
    omp_ns.push_back(per_region_ns(iterations, [&] {
#pragma omp parallel num_threads(threads)
      { sink = sink + 1; }
    }));
#endif
  }
  std::printf("fork/join of an empty region, %d threads, %d regions per sample, 15 samples\n", threads, iterations);
  report("fourfold pool", pool_ns);
  if (!omp_ns.empty()) report("OpenMP (libgomp)", omp_ns);
  return 0;
}
