// What this binary is and where it runs: the build half of every record's manifest.
#pragma once

#include <string>

namespace fourfold {

struct BuildInfo {
  std::string version, git_commit, build_type, compiler, cxx_flags;
  bool sanitizers;
};
BuildInfo build_info();

struct HostInfo {
  std::string cpu_model;
  int logical_cpus;
  bool avx2, fma, f16c, avx512f, avx512bw, avx512vl, avx512_bf16, amx;
};
HostInfo host_info();   // CPUID and /proc/cpuinfo

}  // namespace fourfold
