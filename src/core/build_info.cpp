#include "core/build_info.h"

#include "git_commit.h"   // generated at build time

#include <cstdio>
#include <cstring>
#include <thread>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace fourfold {

BuildInfo build_info() {
  BuildInfo b;
  b.version = FOURFOLD_VERSION;
  b.git_commit = FOURFOLD_GIT_COMMIT;
  b.build_type = FOURFOLD_BUILD_TYPE;
  b.compiler = FOURFOLD_COMPILER;
  b.cxx_flags = FOURFOLD_CXX_FLAGS;
#if defined(__SANITIZE_ADDRESS__)
  b.sanitizers = true;
#else
  b.sanitizers = false;
#endif
  return b;
}

HostInfo host_info() {
  HostInfo h{};
  h.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (std::FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      if (std::strncmp(line, "model name", 10) == 0) {
        const char* colon = std::strchr(line, ':');
        if (colon) {
          h.cpu_model = colon + 2;
          while (!h.cpu_model.empty() && (h.cpu_model.back() == '\n' || h.cpu_model.back() == ' ')) h.cpu_model.pop_back();
        }
        break;
      }
    }
    std::fclose(f);
  }
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    h.fma = c & bit_FMA;
    h.f16c = c & bit_F16C;
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    h.avx2 = b & bit_AVX2;
    h.avx512f = b & bit_AVX512F;
    h.avx512bw = b & bit_AVX512BW;
    h.avx512vl = b & bit_AVX512VL;
    h.amx = d & (1u << 24);   // AMX-TILE
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) h.avx512_bf16 = a & (1u << 5);
#endif
  return h;
}

}  // namespace fourfold
